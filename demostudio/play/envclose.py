"""Closing an env without it shutting pygame down.

Gymnasium's classic-control and Box2D envs call ``pygame.quit()`` in ``close()`` whenever they
rendered, even into an off-screen ``rgb_array`` surface. That would close the studio's window
and invalidate its fonts, so the play loop drops their off-screen surface first."""

from __future__ import annotations

import gymnasium as gym
import pygame


def close_env(env: gym.Env) -> None:
    """``env.close()``, keeping pygame (and the studio's display) initialised."""
    base = env.unwrapped
    screen = getattr(base, "screen", None)
    if (
        isinstance(screen, pygame.Surface)
        and getattr(base, "render_mode", None) != "human"
        and (not pygame.display.get_init() or screen is not pygame.display.get_surface())
    ):
        base.screen = None
    env.close()

"""The window holding on after a session's last episode (``hold_at_end``, watching an agent):
redrawn at a steady rate, the window still resizable, until a key of :data:`HOLD_KEYS` is
pressed or the window is closed."""

from __future__ import annotations

from collections.abc import Callable

import pygame

from demostudio.play.timing import RateClock
from demostudio.play.window import PlayWindow

HOLD_KEYS = frozenset({"escape", "return", "[enter]", "space", "q"})
"""The keys (pygame key names) that end the hold."""


def hold_until_key(window: PlayWindow, clock: RateClock, redraw: Callable[[], None]) -> None:
    """``redraw()`` the window once per ``clock`` tick until one of :data:`HOLD_KEYS` is
    pressed or the window is closed."""
    while True:
        for event in pygame.event.get():
            if event.type == pygame.QUIT:
                return
            if event.type == pygame.KEYDOWN and pygame.key.name(event.key) in HOLD_KEYS:
                return
            if event.type == pygame.VIDEORESIZE:
                window.resize(int(event.w), int(event.h))
        redraw()
        clock.wait()


__all__ = ["HOLD_KEYS", "hold_until_key"]

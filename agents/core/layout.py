"""``--fixed-layout``: one layout in every episode of a procedurally generated env.

MiniGrid (and most procedurally generated envs) draws a new layout at every reset. The RND
paper's hard-exploration games are "singletons" instead: Montezuma's Revenge starts every
episode in the same rooms, so a state seen before is less novel next time. With
``--fixed-layout`` every reset is ``reset(seed=--seed)``, the actors' and the evaluation
episodes' alike, so a run trains (and is evaluated) on the one layout that seed draws.
The env's other randomness restarts from that seed too (sticky actions, ALE's included):
with this flag, two episodes differ only where the agent's actions differ.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym


class FixedLayout(gym.Wrapper):
    """Every ``reset`` uses ``seed``, whatever seed the caller passes (or none)."""

    def __init__(self, env: gym.Env, seed: int) -> None:
        super().__init__(env)
        self.layout_seed = int(seed)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        return self.env.reset(seed=self.layout_seed, options=options)


def with_layout(env: gym.Env, fixed: bool, seed: int) -> gym.Env:
    """``env`` as is, or (``fixed``) wrapped so every episode starts from one layout."""
    return FixedLayout(env, seed) if fixed else env

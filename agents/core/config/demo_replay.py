"""The config group of the demos' own prioritized replay."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from agents.core.config.base import ConfigGroup, require
from agents.core.replay import ReplayKind


@dataclass
class DemoReplayConfig(ConfigGroup):
    """The demos kept in a prioritized replay of their own (R2D3, DQfD, SQIL)."""

    # --- demos -----------------------------------------------------------------------------
    demo_capacity: int = 50_000
    """Demo replay size in sequences (demos are never evicted)."""
    demo_replay_kind: ReplayKind = "proportional"
    """How the demo replay is sampled: uniform, proportional, rank or greedy (as
    --replay-kind)."""

    limits: ClassVar[dict[str, float]] = {"demo_capacity": 10_000_000}

    def check(self) -> None:
        require(self, ("demo_capacity",), 1)

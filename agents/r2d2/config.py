"""R2D2's config: the recurrent-replay config groups with their defaults."""

from __future__ import annotations

from dataclasses import dataclass

from agents.core.config import ReplayAgentConfig


@dataclass
class R2D2Config(ReplayAgentConfig):
    """R2D2: recurrent replay distributed DQN (agent replay only)."""


__all__ = ["R2D2Config"]

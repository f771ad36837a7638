"""R2D2's config: the shared recurrent-replay config with R2D2's defaults."""

from __future__ import annotations

from dataclasses import dataclass

from agents.core.config import CoreConfig


@dataclass
class R2D2Config(CoreConfig):
    """R2D2: recurrent replay distributed DQN (agent replay only)."""


__all__ = ["R2D2Config"]

"""SQIL's config: R2D3's (a demo replay mixed into batches) with half of each batch from
the demos."""

from __future__ import annotations

from dataclasses import dataclass

from agents.r2d3.config import R2D3Config


@dataclass
class SQILConfig(R2D3Config):
    """SQIL (Reddy et al. 2020): Q-learning where demo transitions earn reward 1 and the
    agent's own transitions reward 0, half of each batch from each."""

    demo_ratio: float = 0.5
    """Probability that a batch element comes from the demo replay (SQIL: one half)."""


__all__ = ["SQILConfig"]

"""SQIL's config: the recurrent-replay groups and the demo mix, half of each batch from the
demos."""

from __future__ import annotations

from dataclasses import dataclass

from agents.core.config import DemoConfig, DemoMixConfig, DemoReplayConfig, ReplayAgentConfig


@dataclass
class SQILConfig(DemoMixConfig, DemoReplayConfig, DemoConfig, ReplayAgentConfig):
    """SQIL (Reddy et al. 2020): Q-learning where demo transitions earn reward 1 and the
    agent's own transitions reward 0, half of each batch from each."""

    demo_ratio: float = 0.5


__all__ = ["SQILConfig"]

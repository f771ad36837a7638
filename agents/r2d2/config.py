"""R2D2's config: the recurrent-replay config groups with their defaults."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agents.core.config import ReplayAgentConfig


@dataclass
class R2D2Config(ReplayAgentConfig):
    """R2D2: recurrent replay distributed DQN (agent replay only)."""

    # auto: on CartPole-v1 the mirror halves the env steps R2D2 needs to reach 475
    # (benchmarks/results/reactor-cartpole-ablation-40k/results.md, "The mirror on R2D2").
    mirror: Literal["none", "env", "auto"] = "auto"
    """env: make the network exactly symmetric under the env's known reflection (CartPole,
    Acrobot, LunarLander; agents.core.mirror): twice the torso's cost; auto: env where the
    env has a known reflection, none elsewhere (settled when the run starts, written to
    config.json)."""
    # Every 2,500 env steps (the core's 5,000): the stop rule can end a run only at an
    # evaluation, and a small env's target often comes between two at 5,000.
    eval_every: int = 2_500


__all__ = ["R2D2Config"]

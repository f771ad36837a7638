"""DQfD's config: the recurrent-replay groups with DQfD's defaults (feed-forward, short
sequences, 10-step returns), its demo replay, pre-training, loss weights and priorities."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from agents.core.config import (
    ConfigGroup,
    DemoConfig,
    DemoReplayConfig,
    MarginConfig,
    ReplayAgentConfig,
    require,
)


@dataclass
class DQfDSettings(ConfigGroup):
    """What only DQfD has: pre-training, its loss weights and priority bonuses."""

    # --- algorithm: pre-training -----------------------------------------------------------
    pretrain_updates: int = 2_000
    """Learner updates on demos only before any env step (0: no pre-training)."""
    pretrain_log_every: int = 200
    """Log the pre-training losses every this many updates."""

    # --- algorithm -------------------------------------------------------------------------
    lambda_n_step: float = 1.0
    """Weight lambda1 of the n-step double-Q loss (lambda2 is --lambda-margin)."""
    lambda_l2: float = 1e-5
    """Weight lambda3 of the L2 regularisation of the network's parameters."""

    # --- replay ----------------------------------------------------------------------------
    demo_priority_bonus: float = 1.0
    """epsilon_d added to the priority of demo sequences (keeps them sampled)."""
    agent_priority_bonus: float = 0.001
    """epsilon_a added to the priority of agent sequences."""

    limits: ClassVar[dict[str, float]] = {"pretrain_updates": 100_000_000}
    diverging: ClassVar[tuple[str, ...]] = ("lambda_n_step", "lambda_l2")

    def check(self) -> None:
        names = ("pretrain_updates", "lambda_n_step", "lambda_l2")
        require(self, names, 0)
        require(self, ("demo_priority_bonus", "agent_priority_bonus"), 0.0, strict=True)
        require(self, ("pretrain_log_every",), 1)


@dataclass
class DQfDConfig(DQfDSettings, MarginConfig, DemoReplayConfig, DemoConfig, ReplayAgentConfig):
    """DQfD (Hester et al. 2018): pre-training on demos, then interaction, with a
    large-margin loss on demo transitions and demos kept in prioritized replay."""

    # DQfD's defaults (the paper's: feed-forward, 10-step returns; 0.01 exploration, since
    # the pre-trained policy already acts like the demonstrator)
    epsilon_base: float = 0.01
    recurrent: bool = False
    burn_in: int = 0
    trace: int = 10
    period: int = 5
    n_step: int = 10
    value_rescaling: bool = False
    target_update_every: int = 250


__all__ = ["DQfDConfig", "DQfDSettings"]

"""DQfD's config: the shared recurrent-replay config with DQfD's defaults (feed-forward,
short sequences, 10-step returns), its demo replay, pre-training and loss weights."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agents.r2d2.config import R2D2Config


@dataclass
class DQfDConfig(R2D2Config):
    """DQfD (Hester et al. 2018): pre-training on demos, then interaction, with a
    large-margin loss on demo transitions and demos kept in prioritized replay."""

    # --- actors (DQfD defaults) ---------------------------------------------------------------
    epsilon_base: float = 0.01
    """Exploration of the first actor (the others less, Ape-X ladder); DQfD: 0.01, since
    the pre-trained policy already acts like the demonstrator."""

    # --- network and sequences (DQfD defaults) ---------------------------------------------
    recurrent: bool = False
    """LSTM core (recurrent DQfD); off (default): a feed-forward Q network as in the paper."""
    burn_in: int = 0
    """Steps at the start of each sequence used only to refresh the stored LSTM state."""
    trace: int = 10
    """Steps of each sequence that are learned from (feed-forward: transitions per item)."""
    period: int = 5
    """A new sequence starts every this many steps."""
    n_step: int = 10
    """n of the n-step double-Q loss term (DQfD: 10)."""
    value_rescaling: bool = False
    """Use h(x) on targets (R2D2); DQfD's paper learns raw values."""
    target_update_every: int = 250
    """Copy the online network to the target network every this many updates."""

    # --- demonstrations --------------------------------------------------------------------
    demos: tuple[Path, ...] = ()
    """Demo episode files or folders (searched recursively for *.h5)."""
    demo_env_override: str | None = None
    """Accept demos recorded on this env id instead of --env (spaces must still match)."""
    demo_capacity: int = 50_000
    """Demo replay size in sequences (demos are never evicted by agent data)."""

    # --- pre-training ----------------------------------------------------------------------
    pretrain_updates: int = 2_000
    """Learner updates on demos only before any env step (0: no pre-training)."""
    pretrain_log_every: int = 200
    """Log the pre-training losses every this many updates."""

    # --- loss --------------------------------------------------------------------------------
    margin: float = 0.8
    """Large-margin classification: margin l(a_E, a) for actions a other than the demo's."""
    lambda_n_step: float = 1.0
    """Weight lambda1 of the n-step double-Q loss."""
    lambda_margin: float = 1.0
    """Weight lambda2 of the large-margin loss (demo transitions only)."""
    lambda_l2: float = 1e-5
    """Weight lambda3 of the L2 regularisation of the network's parameters."""

    # --- priorities ----------------------------------------------------------------------------
    demo_priority_bonus: float = 1.0
    """epsilon_d added to the priority of demo sequences (keeps them sampled)."""
    agent_priority_bonus: float = 0.001
    """epsilon_a added to the priority of agent sequences."""

    def validate(self) -> None:
        super().validate()
        if not self.demos:
            raise ValueError("--demos: expected at least one demo file or folder, got none")
        for name in ("pretrain_updates", "lambda_n_step", "lambda_margin", "lambda_l2", "margin"):
            if getattr(self, name) < 0:
                raise ValueError(
                    f"--{name.replace('_', '-')}: expected >= 0, got {getattr(self, name)}"
                )
        for name in ("demo_priority_bonus", "agent_priority_bonus"):
            if getattr(self, name) <= 0:
                raise ValueError(
                    f"--{name.replace('_', '-')}: expected > 0, got {getattr(self, name)}"
                )
        if self.pretrain_log_every < 1:
            raise ValueError(f"--pretrain-log-every: expected >= 1, got {self.pretrain_log_every}")
        if self.demo_capacity < 1:
            raise ValueError(f"--demo-capacity: expected >= 1, got {self.demo_capacity}")


__all__ = ["DQfDConfig"]

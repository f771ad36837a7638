"""Behaviour cloning's config: the run, network, sequence, optimiser and demo groups, plus
the validation split and early stopping. Every field is a ``demostudio train bc`` flag."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from agents.core.config import (
    ConfigGroup,
    DemoConfig,
    NetworkConfig,
    OptimConfig,
    RunConfig,
    SequenceConfig,
    require,
)


@dataclass
class BCSettings(ConfigGroup):
    """What only BC has: the validation split, early stopping and stored-state refresh."""

    # --- algorithm: validation and early stopping ------------------------------------------
    val_fraction: float = 0.2
    """Share of the demo EPISODES held out for validation (>= 1 episode when there are 2+)."""
    # --- run -------------------------------------------------------------------------------
    max_updates: int = 5_000
    """Stop after this many updates at the latest."""
    # --- algorithm: validation and early stopping ------------------------------------------
    val_every: int = 50
    """Measure the validation loss every this many updates."""
    patience: int = 10
    """Stop after this many validations without improvement (0: never stop early)."""
    min_delta: float = 1e-4
    """A validation loss must drop by more than this to count as an improvement."""
    state_refresh_every: int = 500
    """Recurrent: recompute the stored LSTM states of the demo sequences with the current
    network every this many updates (0: keep the initial network's states)."""

    limits: ClassVar[dict[str, float]] = {"max_updates": 100_000_000}

    def check(self) -> None:
        require(self, ("max_updates", "val_every"), 1)
        require(self, ("patience", "state_refresh_every"), 0)
        require(self, ("min_delta",), 0)
        if not 0.0 <= self.val_fraction < 1.0:
            raise ValueError(f"--val-fraction: expected in [0, 1), got {self.val_fraction}")


@dataclass
class BCConfig(BCSettings, DemoConfig, OptimConfig, SequenceConfig, NetworkConfig, RunConfig):
    """Behaviour cloning: cross-entropy on the demonstrator's actions, early-stopped on a
    validation split of the demo episodes; the policy is evaluated in the env (the run's
    clock is updates: BC never steps an env to learn)."""

    # BC's defaults: a feed-forward policy on non-overlapping sequences, Adam's own epsilon
    recurrent: bool = False
    burn_in: int = 0
    trace: int = 20
    period: int = 20
    adam_eps: float = 1e-8
    eval_every: int = 1_000

    def check(self) -> None:
        if self.burn_in and not self.recurrent:
            raise ValueError(
                f"--burn-in: expected 0 for a feed-forward policy (or pass --recurrent), "
                f"got {self.burn_in}"
            )


__all__ = ["BCConfig", "BCSettings"]

"""The discount config group and n-step double Q-learning's, which bootstraps with it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from agents.core.config.base import ConfigGroup, require


@dataclass
class DiscountConfig(ConfigGroup):
    """The discount of returns (every algorithm that bootstraps from one value)."""

    # --- algorithm -------------------------------------------------------------------------
    discount: float = 0.99
    """Discount factor gamma."""

    def check(self) -> None:
        if not 0.0 < self.discount <= 1.0:
            raise ValueError(f"--discount: expected in (0, 1], got {self.discount}")


@dataclass
class QLearningConfig(DiscountConfig):
    """n-step double Q-learning targets and the target network."""

    # --- algorithm -------------------------------------------------------------------------
    n_step: int = 5
    """n of the n-step double-Q targets."""
    value_rescaling: bool = True
    """Use h(x) = sign(x)(sqrt(|x|+1)-1) + eps*x on targets (R2D2)."""
    rescale_eps: float = 1e-3
    """eps of the value rescaling h."""
    target_update_every: int = 500
    """Copy the online network to the target network every this many updates."""

    limits: ClassVar[dict[str, float]] = {"n_step": 1000}
    diverging: ClassVar[tuple[str, ...]] = ("rescale_eps",)

    def check(self) -> None:
        require(self, ("n_step", "target_update_every"), 1)
        require(self, ("rescale_eps",), 0.0, strict=True)

"""The learner's optimiser config group."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from agents.core.config.base import ConfigGroup, _flag, require


@dataclass
class OptimConfig(ConfigGroup):
    """The learner's optimiser and batch size."""

    # --- algorithm -------------------------------------------------------------------------
    batch_size: int = 32
    """Sequences per learner update."""
    learning_rate: float = 1e-3
    """Adam learning rate."""
    adam_eps: float = 1e-3
    """Adam epsilon."""
    adam_beta1: float = 0.9
    """Adam's beta1: the decay of its running mean of gradients (momentum). 0: each step
    follows the current gradient alone, scaled by the running RMS (RMSProp with Adam's
    bias correction)."""
    max_grad_norm: float = 10.0
    """Gradient norm clip."""

    limits: ClassVar[dict[str, float]] = {"batch_size": 4096, "learning_rate": 1.0, "adam_eps": 1.0}
    diverging: ClassVar[tuple[str, ...]] = ("learning_rate", "adam_eps", "max_grad_norm")

    def check(self) -> None:
        require(self, ("batch_size",), 1)
        require(self, ("learning_rate", "adam_eps", "max_grad_norm"), 0.0, strict=True)
        if not 0.0 <= self.adam_beta1 < 1.0:
            raise ValueError(f"{_flag('adam_beta1')}: expected in [0, 1), got {self.adam_beta1}")

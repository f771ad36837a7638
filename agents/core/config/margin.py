"""The config group of DQfD's large-margin loss on demo steps."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from agents.core.config.base import ConfigGroup, require


@dataclass
class MarginConfig(ConfigGroup):
    """DQfD's large-margin classification loss on demo steps (DQfD; R2D3 optionally)."""

    # --- algorithm -------------------------------------------------------------------------
    margin: float = 0.8
    """Large-margin classification: margin l(a_E, a) for actions a other than the demo's."""
    lambda_margin: float = 1.0
    """Weight lambda2 of the large-margin loss on demo steps (0: off)."""

    diverging: ClassVar[tuple[str, ...]] = ("lambda_margin",)

    def check(self) -> None:
        require(self, ("margin", "lambda_margin"), 0)

"""The config group of a demo replay mixed into batches by ratio."""

from __future__ import annotations

from dataclasses import dataclass

from agents.core.config.base import ConfigGroup, require, require_unit


@dataclass
class DemoMixConfig(ConfigGroup):
    """A demo replay mixed into batches by a fixed or annealed ratio (R2D3, SQIL)."""

    # --- demos -----------------------------------------------------------------------------
    demo_ratio: float = 0.25
    """Probability that a batch element comes from the demo replay (initial value)."""
    demo_ratio_final: float | None = None
    """Anneal the demo ratio linearly to this value (none: keep it fixed)."""
    demo_ratio_steps: int = 50_000
    """Env steps over which the demo ratio is annealed."""

    def check(self) -> None:
        require_unit(self, ("demo_ratio", "demo_ratio_final"))
        require(self, ("demo_ratio_steps",), 0)

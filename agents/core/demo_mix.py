"""The demo mix shared by R2D3 and SQIL: a prioritized demo replay drawn from with a fixed or
linearly annealed per-element ratio (DemoMixConfig), reported as ``demo_ratio``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agents.core.config import DemoMixConfig
from agents.core.demo_buffer import DemoReplaySpec, demo_source
from agents.core.mixing import DataSource, LinearSchedule

if TYPE_CHECKING:
    from agents.core.context import RunContext


class DemoMix:
    def __init__(self, mix: DemoMixConfig):
        """``mix``: the config's DemoMixConfig group (:meth:`ConfigGroup.group`)."""
        self.schedule = LinearSchedule(mix.demo_ratio, mix.demo_ratio_final, mix.demo_ratio_steps)

    def source(self, spec: DemoReplaySpec, ctx: RunContext) -> DataSource:
        """The demo replay built from ``spec`` (settled once the run's env is), drawn from at
        the mix's ratio."""
        return demo_source(spec, ctx, self.schedule)

    def metrics(self, env_steps: int) -> dict[str, float]:
        return {"demo_ratio": self.schedule(env_steps)}


__all__ = ["DemoMix"]

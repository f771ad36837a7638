"""The demo mix shared by R2D3 and SQIL: a prioritized demo replay drawn from with a fixed or
linearly annealed per-element ratio (DemoMixConfig), reported as ``demo_ratio``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agents.core.demos import demo_source
from agents.core.mixing import DataSource, LinearSchedule

if TYPE_CHECKING:
    from agents.core.context import RunContext


class DemoMix:
    def __init__(self, cfg: Any):
        self.schedule = LinearSchedule(cfg.demo_ratio, cfg.demo_ratio_final, cfg.demo_ratio_steps)
        self.cfg = cfg

    def source(self, ctx: RunContext) -> DataSource:
        return demo_source(self.cfg, ctx, self.schedule)

    def metrics(self, env_steps: int) -> dict[str, float]:
        return {"demo_ratio": self.schedule(env_steps)}


__all__ = ["DemoMix"]

"""SQIL: the demo mix as an extra source and SQIL's relabelled-reward loss."""

from __future__ import annotations

from functools import partial

from agents.core.batch import Loss
from agents.core.config import DemoMixConfig
from agents.core.context import RunContext
from agents.core.demo_buffer import DemoReplaySpec
from agents.core.demo_mix import DemoMix
from agents.core.mixing import DataSource
from agents.core.run import TrainResult, train
from agents.r2d2.agent import R2D2
from agents.sqil.config import SQILConfig
from agents.sqil.learning import sqil_loss


class SQIL(R2D2):
    name = "sqil"
    config_cls = SQILConfig

    def __init__(self, cfg: SQILConfig):
        super().__init__(cfg)
        self.demo_mix = DemoMix(cfg.group(DemoMixConfig))

    def loss(self) -> Loss:
        return partial(sqil_loss, cfg=self.cfg)

    def sources(self, ctx: RunContext) -> list[DataSource]:
        return [self.demo_mix.source(DemoReplaySpec.of(self.cfg), ctx)]

    def metrics(self, ctx: RunContext) -> dict[str, float]:
        return self.demo_mix.metrics(ctx.counters.env_steps)


def train_sqil(cfg: SQILConfig) -> TrainResult:
    return train(SQIL(cfg))


__all__ = ["SQIL", "train_sqil"]

"""R2D2 wiring: the core trainer with the agent replay as the only batch source."""

from __future__ import annotations

from agents.core.algorithm import Algorithm
from agents.core.trainer import TrainResult, train
from agents.r2d2.config import R2D2Config


class R2D2(Algorithm):
    name = "r2d2"


def train_r2d2(cfg: R2D2Config) -> TrainResult:
    return train(cfg, R2D2())


__all__ = ["R2D2", "train_r2d2"]

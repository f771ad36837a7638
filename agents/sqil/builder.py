"""SQIL wiring: R2D3's demo replay and mixing with SQIL's relabelled-reward loss."""

from __future__ import annotations

from agents.core.trainer import TrainResult, train
from agents.r2d3.builder import R2D3
from agents.sqil.config import SQILConfig
from agents.sqil.learning import sqil_loss


class SQIL(R2D3):
    name = "sqil"
    loss_fn = staticmethod(sqil_loss)


def train_sqil(cfg: SQILConfig) -> TrainResult:
    return train(cfg, SQIL(cfg))


__all__ = ["SQIL", "train_sqil"]

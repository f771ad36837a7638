"""R2D2: the base Agent as it is (dueling Q, hard-copied target, epsilon-greedy actors,
agent replay at a fixed replay ratio)."""

from __future__ import annotations

from agents.core.agent import Agent
from agents.core.run import TrainResult, train
from agents.r2d2.config import R2D2Config


class R2D2(Agent):
    name = "r2d2"
    config_cls = R2D2Config


def train_r2d2(cfg: R2D2Config) -> TrainResult:
    return train(R2D2(cfg))


__all__ = ["R2D2", "train_r2d2"]

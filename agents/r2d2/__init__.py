"""R2D2: the core's defaults (recurrent Q-learning on the agent replay only)."""

from agents.r2d2.agent import R2D2, train_r2d2
from agents.r2d2.config import R2D2Config

__all__ = ["R2D2", "R2D2Config", "train_r2d2"]

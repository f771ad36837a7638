"""R2D2: recurrent Q-learning on the agent replay (the base of R2D3, DQfD and SQIL)."""

from agents.r2d2.agent import R2D2, train_r2d2
from agents.r2d2.config import R2D2Config
from agents.r2d2.learning import r2d2_loss

__all__ = ["R2D2", "R2D2Config", "r2d2_loss", "train_r2d2"]

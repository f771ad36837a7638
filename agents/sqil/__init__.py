"""SQIL: soft Q imitation learning on the core's Q-learning (demo reward 1, agent 0)."""

from agents.sqil.agent import SQIL, train_sqil
from agents.sqil.config import SQILConfig
from agents.sqil.learning import sqil_loss, sqil_rewards

__all__ = ["SQIL", "SQILConfig", "sqil_loss", "sqil_rewards", "train_sqil"]

"""SQIL: soft Q imitation learning on the core's Q-learning (demo reward 1, agent 0)."""

from agents.sqil.builder import SQIL, train_sqil
from agents.sqil.config import SQILConfig
from agents.sqil.learning import DEMO_SOURCE, sqil_loss, sqil_rewards

__all__ = ["DEMO_SOURCE", "SQIL", "SQILConfig", "sqil_loss", "sqil_rewards", "train_sqil"]

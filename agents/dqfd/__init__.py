"""DQfD: pre-training on demos, then interaction, with a large-margin loss on demo
transitions and demos kept permanently in prioritized replay."""

from agents.dqfd.agent import PRETRAINED_NAME, DQfD, PriorityShare, train_dqfd
from agents.dqfd.config import DQfDConfig
from agents.dqfd.learning import DQfDLoss, global_weights, l2_penalty, large_margin_loss

__all__ = [
    "PRETRAINED_NAME",
    "DQfD",
    "DQfDConfig",
    "DQfDLoss",
    "PriorityShare",
    "global_weights",
    "l2_penalty",
    "large_margin_loss",
    "train_dqfd",
]

"""DQfD: pre-training on demos, then interaction, with a large-margin loss on demo
transitions and demos kept permanently in prioritized replay."""

from agents.dqfd.builder import DQfD, PriorityShare, train_dqfd
from agents.dqfd.config import DQfDConfig
from agents.dqfd.learning import DQfDLoss, global_weights, l2_penalty, large_margin_loss
from agents.dqfd.pretrain import pretrain

__all__ = [
    "DQfD",
    "DQfDConfig",
    "DQfDLoss",
    "PriorityShare",
    "global_weights",
    "l2_penalty",
    "large_margin_loss",
    "pretrain",
    "train_dqfd",
]

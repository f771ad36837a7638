"""Behaviour cloning: cross-entropy on demo actions (feed-forward or recurrent with
burn-in), a validation split of demo episodes, early stopping, evaluation in the env."""

from agents.bc.agent import BC, train_bc
from agents.bc.config import BCConfig
from agents.bc.learning import bc_loss, policy_logits
from agents.bc.split import DemoSplit, EarlyStopping, split_episodes

__all__ = [
    "BC",
    "BCConfig",
    "DemoSplit",
    "EarlyStopping",
    "bc_loss",
    "policy_logits",
    "split_episodes",
    "train_bc",
]

"""Behaviour cloning's loss: cross-entropy of the policy head's logits against the
demonstrator's actions, over the learned steps of each sequence (after the burn-in).

Tensors are time-major ``[T, B, ...]`` as in the core (see :mod:`agents.core.batch`).
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from agents.core.batch import LearnerView, LossOutput, TorchBatch
from agents.core.losses import unroll

HEAD = "logits"
"""The policy head BC trains and acts with."""


class BCLoss(NamedTuple):
    loss: torch.Tensor
    """Mean cross-entropy over the learned steps (scalar)."""
    correct: torch.Tensor
    """Learned steps where the policy's top action is the demonstrator's (scalar count)."""
    steps: torch.Tensor
    """Learned steps in the batch (scalar count)."""


def policy_logits(network: torch.nn.Module, batch: TorchBatch, burn_in: int) -> torch.Tensor:
    """Logits ``[T - burn_in, B, A]`` after the burn-in, which only refreshes the stored
    LSTM state (no gradient)."""
    return unroll(network, batch, burn_in).heads[HEAD][burn_in:]


def bc_loss(network: torch.nn.Module, batch: TorchBatch, burn_in: int) -> BCLoss:
    logits = policy_logits(network, batch, burn_in)
    action = batch.action[burn_in:]
    mask = batch.mask[burn_in:].float()
    ce = torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), action.reshape(-1), reduction="none"
    ).reshape(action.shape)
    steps = mask.sum()
    loss = (ce * mask).sum() / steps.clamp(min=1)
    correct = ((logits.argmax(-1) == action).float() * mask).sum()
    return BCLoss(loss, correct.detach(), steps.detach())


def bc_learner_loss(learner: LearnerView, batch: TorchBatch, burn_in: int) -> LossOutput:
    """:func:`bc_loss` as the learner's loss (no priorities: demo batches are uniform)."""
    out = bc_loss(learner.network, batch, burn_in)
    accuracy = float(out.correct / out.steps.clamp(min=1))
    return LossOutput(out.loss, metrics={"loss": float(out.loss.detach()), "accuracy": accuracy})


__all__ = ["HEAD", "BCLoss", "bc_learner_loss", "bc_loss", "policy_logits"]

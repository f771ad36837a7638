"""Behaviour cloning's loss: cross-entropy of the network's action scores (used as logits)
against the demonstrator's actions, over the learned steps of each sequence.

Tensors are time-major ``[T, B, ...]`` as in the core (see :mod:`agents.core.learner`).
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from agents.core.learner import TorchBatch
from agents.core.networks import RecurrentQNetwork


class BCLoss(NamedTuple):
    loss: torch.Tensor
    """Mean cross-entropy over the learned steps (scalar)."""
    correct: torch.Tensor
    """Learned steps where the policy's top action is the demonstrator's (scalar count)."""
    steps: torch.Tensor
    """Learned steps in the batch (scalar count)."""


def policy_logits(network: RecurrentQNetwork, batch: TorchBatch, burn_in: int) -> torch.Tensor:
    """Action scores ``[T - burn_in, B, A]`` after the burn-in, which only refreshes the
    stored LSTM state (no gradient)."""
    state = batch.state
    if burn_in > 0:
        with torch.no_grad():
            state = network(
                {k: v[:burn_in] for k, v in batch.obs.items()},
                batch.prev_action[:burn_in],
                batch.prev_reward[:burn_in],
                state,
            ).state
    return network(
        {k: v[burn_in:] for k, v in batch.obs.items()},
        batch.prev_action[burn_in:],
        batch.prev_reward[burn_in:],
        state,
    ).q


def bc_loss(network: RecurrentQNetwork, batch: TorchBatch, burn_in: int) -> BCLoss:
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


__all__ = ["BCLoss", "bc_loss", "policy_logits"]

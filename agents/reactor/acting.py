"""The Reactor's acting policy and the behaviour probabilities stored with every step.

The actor samples from ``mu = (1 - eps) * pi + eps / A`` (the policy mixed with a uniform
distribution, Gruslys et al. 2018 section 3.4.1) and stores ``mu(.|x)`` as a per-step extra:
``mu(a_t|x_t)`` feeds the Retrace traces and beta, the whole ``mu(.|x_t)`` ACER's TIS.
A demo step has no behaviour policy to query; it is stored as ``mu = one_hot(a_t)``, i.e.
``mu(a_t|x_t) = 1`` (see :func:`demo_behaviour`).
"""

from __future__ import annotations

import torch


def behaviour_probs(logits: torch.Tensor, epsilon: float) -> torch.Tensor:
    """``mu = (1 - epsilon) * softmax(logits) + epsilon / A`` over the last axis."""
    if not 0.0 <= epsilon <= 1.0:
        raise ValueError(f"expected epsilon in [0, 1], got {epsilon}")
    return (1.0 - epsilon) * torch.softmax(logits, -1) + epsilon / logits.shape[-1]


def demo_behaviour(action: torch.Tensor, num_actions: int) -> torch.Tensor:
    """The behaviour distribution of demo steps: one-hot on the recorded action,
    ``[..., A]`` float (so ``mu(a|x) = 1`` for the recorded ``a``)."""
    return torch.nn.functional.one_hot(action.long(), num_actions).float()


__all__ = ["behaviour_probs", "demo_behaviour"]

"""ACER's efficient trust region (Wang et al. 2017, section 3.3) and the average policy.

The policy is a function of statistics ``phi`` per step (here its logits, ``[T, B, A]``).
Given ``g``, the gradient of the per-step policy objective (to maximise) with respect to
``phi``, and ``k = grad_phi KL(pi_avg || pi_phi)``, the step is the solution of ::

    minimise 0.5 ||g - z||^2   subject to   k^T z <= delta

which is, per step, ::

    z* = g - max(0, (k^T g - delta) / ||k||^2) k

(``z* = g`` when ``k^T g <= delta``; otherwise ``k^T z* = delta`` exactly). The network is
then updated along ``(d phi / d theta)^T z*``: :func:`trust_region_loss` returns a surrogate
whose gradient is that. For a softmax over logits,
``grad_logits KL(pi_avg || softmax(logits)) = softmax(logits) - pi_avg``.
The constraint is per step, on the unnormalised per-step gradient (as ACER does); the
weights that average steps into the loss (mask, priority weights, 1/count) are applied
after the projection.

The average policy network follows the online one by Polyak averaging (the source
document's ``--tau``, the weight of the current average)::

    theta_avg <- tau * theta_avg + (1 - tau) * theta

which a core target set with Polyak rate ``1 - tau`` does; :func:`polyak_update_` is the same
update for a plain module pair.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import nn


def trust_region_project(g: torch.Tensor, k: torch.Tensor, delta: float) -> torch.Tensor:
    """``z* = g - max(0, (k^T g - delta) / ||k||^2) k`` over the last axis.

    ``g``, ``k``: ``[..., D]``; returns ``[..., D]``. Where ``k = 0`` (the policy equals the
    average policy) the step is ``g``.
    """
    if delta < 0.0:
        raise ValueError(f"expected a trust-region delta >= 0, got {delta}")
    if g.shape != k.shape:
        raise ValueError(f"expected g and k of one shape, got {tuple(g.shape)}, {tuple(k.shape)}")
    excess = (k * g).sum(-1, keepdim=True) - delta
    norm2 = (k * k).sum(-1, keepdim=True).clamp_min(torch.finfo(k.dtype).tiny)
    return g - (excess / norm2).clamp_min(0.0) * k


def kl_gradient_logits(logits: torch.Tensor, average_logits: torch.Tensor) -> torch.Tensor:
    """``k = grad_logits KL(pi_avg || softmax(logits)) = softmax(logits) - pi_avg``, ``[..., A]``
    (no gradient)."""
    return (
        torch.softmax(logits.detach(), -1) - torch.softmax(average_logits.detach(), -1)
    ).detach()


class TrustRegionLoss(NamedTuple):
    loss: torch.Tensor
    """Scalar surrogate: its gradient is ``-sum_{t,b} w_{t,b} (d logits_{t,b}/d theta)^T z*``."""
    active: torch.Tensor
    """``[T, B]`` bool, the steps where the constraint cut the gradient."""


def trust_region_loss(
    objective: torch.Tensor,
    logits: torch.Tensor,
    average_logits: torch.Tensor,
    step_weight: torch.Tensor,
    delta: float,
) -> TrustRegionLoss:
    """The policy loss with ACER's trust region applied per step.

    ``objective``: ``[T, B]`` per-step policy objective to maximise (e.g. minus
    :func:`~agents.reactor.policy_gradient.beta_loo_loss` plus the entropy bonus), a function
    of step ``(t, b)``'s ``logits`` only; ``logits``: ``[T, B, A]`` in the graph of the
    network; ``average_logits``: ``[T, B, A]`` of the average policy network;
    ``step_weight``: ``[T, B]`` how each step counts in the loss (0 outside the learned mask).
    Without the constraint (``delta = inf``) the loss's gradient equals that of
    ``-(step_weight * objective).sum()``.
    """
    (g,) = torch.autograd.grad(objective.sum(), logits, retain_graph=True)
    k = kl_gradient_logits(logits, average_logits)
    z = trust_region_project(g, k, delta)
    active = ((k * g).sum(-1) > delta) & (step_weight > 0)
    loss = -(step_weight.detach().unsqueeze(-1) * z.detach() * logits).sum()
    return TrustRegionLoss(loss=loss, active=active)


@torch.no_grad()
def polyak_update_(average: nn.Module, online: nn.Module, tau: float) -> None:
    """``average <- tau * average + (1 - tau) * online`` for every parameter and floating
    buffer (other buffers are copied)."""
    if not 0.0 <= tau <= 1.0:
        raise ValueError(f"expected tau in [0, 1], got {tau}")
    for avg, new in zip(average.parameters(), online.parameters(), strict=True):
        avg.lerp_(new, 1.0 - tau)
    for avg, new in zip(average.buffers(), online.buffers(), strict=True):
        if avg.is_floating_point():
            avg.lerp_(new, 1.0 - tau)
        else:
            avg.copy_(new)


__all__ = [
    "TrustRegionLoss",
    "kl_gradient_logits",
    "polyak_update_",
    "trust_region_loss",
    "trust_region_project",
]

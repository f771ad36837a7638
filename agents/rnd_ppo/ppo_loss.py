"""PPO's clipped objective with one or two value heads (Schulman et al. 2017; Burda et al.
2018 for the two heads).

All per-step tensors are time-major ``[T, B]`` (a minibatch of whole segments); ``mask``
(``[T, B]`` bool, optional) marks the real steps, every mean below is over them::

    A        = ext_coef * A_ext + int_coef * A_int       (combined_advantage)
    A        = (A - mean(A)) / (std(A) + 1e-8)            (if norm_adv, per minibatch)
    rho      = exp(log pi(a|s) - log pi_old(a|s))
    L_pi     = -mean(min(rho * A, clip(rho, 1 - eps, 1 + eps) * A))
    L_V^h    = 0.5 * mean((V_h - R_h)^2)                   for each head h (ext, int), or
    L_V^h    = 0.5 * mean(max((V_h - R_h)^2, (V_c - R_h)^2))   clipped, where
    V_c      = V_old + clip(V_h - V_old, -eps, eps)
    L        = L_pi + vf_coef * sum_h L_V^h - ent_coef * mean(H[pi(.|s)])

Metrics: ``approx_kl`` = mean((rho - 1) - log rho) (an unbiased, non-negative estimator of
KL(pi_old || pi)), ``clip_fraction`` = share of steps with |rho - 1| > eps.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple, Protocol

import torch


class PPOLossSettings(Protocol):
    """The config fields the loss reads (:class:`agents.rnd_ppo.config.PPOSettings`)."""

    clip_range: float
    clip_value: bool
    ent_coef: float
    vf_coef: float
    norm_adv: bool


class ValueTerms(NamedTuple):
    """One value head's terms, each ``[T, B]``."""

    value: torch.Tensor
    """The head's prediction now (carries the gradient)."""
    old_value: torch.Tensor
    """Its prediction when the rollout was collected."""
    returns: torch.Tensor
    """The GAE return R_h (the regression target)."""


class PPOLossOutput(NamedTuple):
    loss: torch.Tensor
    """Scalar: L_pi + vf_coef * sum of value losses - ent_coef * entropy."""
    metrics: dict[str, float]
    """policy_loss, value_loss/<head>, entropy, approx_kl, clip_fraction, loss."""


def masked_mean(x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """Mean of ``x`` over the steps where ``mask`` (same shape) is True (all if None)."""
    if mask is None:
        return x.mean()
    m = mask.to(x.dtype)
    return (x * m).sum() / m.sum().clamp(min=1.0)


def combined_advantage(
    adv_ext: torch.Tensor, adv_int: torch.Tensor | None, ext_coef: float, int_coef: float
) -> torch.Tensor:
    """``ext_coef * A_ext + int_coef * A_int`` (``[T, B]``); ``A_int`` None: extrinsic only."""
    if adv_int is None:
        return ext_coef * adv_ext
    return ext_coef * adv_ext + int_coef * adv_int


def normalize_advantage(
    adv: torch.Tensor, mask: torch.Tensor | None = None, eps: float = 1e-8
) -> torch.Tensor:
    """``(A - mean) / (std + eps)`` over the (masked) steps; padded steps become 0."""
    mean = masked_mean(adv, mask)
    std = masked_mean((adv - mean) ** 2, mask).sqrt()
    out = (adv - mean) / (std + eps)
    return out if mask is None else out * mask.to(out.dtype)


def clipped_surrogate(
    log_prob: torch.Tensor,
    old_log_prob: torch.Tensor,
    advantage: torch.Tensor,
    clip_range: float,
    mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(L_pi, rho)``: the clipped surrogate loss (to minimise) and the ratios ``[T, B]``."""
    ratio = torch.exp(log_prob - old_log_prob)
    unclipped = ratio * advantage
    clipped = ratio.clamp(1.0 - clip_range, 1.0 + clip_range) * advantage
    return -masked_mean(torch.minimum(unclipped, clipped), mask), ratio


def value_loss(
    terms: ValueTerms, clip_range: float | None, mask: torch.Tensor | None = None
) -> torch.Tensor:
    """``0.5 * mean((V - R)^2)``, or PPO2's clipped form when ``clip_range`` is a number."""
    err = (terms.value - terms.returns) ** 2
    if clip_range is not None:
        v_clip = terms.old_value + (terms.value - terms.old_value).clamp(-clip_range, clip_range)
        err = torch.maximum(err, (v_clip - terms.returns) ** 2)
    return 0.5 * masked_mean(err, mask)


def ppo_loss(
    log_prob: torch.Tensor,
    old_log_prob: torch.Tensor,
    entropy: torch.Tensor,
    advantage: torch.Tensor,
    values: Mapping[str, ValueTerms],
    settings: PPOLossSettings,
    mask: torch.Tensor | None = None,
) -> PPOLossOutput:
    """The whole PPO loss of one minibatch (see the module docstring).

    ``log_prob``, ``old_log_prob``: ``[T, B]`` log-probabilities of the taken actions under
    the current policy and the behaviour policy; ``entropy``: ``[T, B]`` policy entropy;
    ``advantage``: ``[T, B]`` combined advantage (normalised here if ``settings.norm_adv``);
    ``values``: head name (``"ext"``, ``"int"``) -> :class:`ValueTerms`."""
    if settings.norm_adv:
        advantage = normalize_advantage(advantage, mask)
    policy_loss, ratio = clipped_surrogate(
        log_prob, old_log_prob, advantage.detach(), settings.clip_range, mask
    )
    v_clip = settings.clip_range if settings.clip_value else None
    head_losses = {name: value_loss(t, v_clip, mask) for name, t in values.items()}
    total_value = sum(head_losses.values(), torch.zeros((), device=log_prob.device))
    mean_entropy = masked_mean(entropy, mask)
    loss = policy_loss + settings.vf_coef * total_value - settings.ent_coef * mean_entropy
    with torch.no_grad():
        log_ratio = log_prob - old_log_prob
        approx_kl = masked_mean((ratio - 1.0) - log_ratio, mask)
        clipped = ((ratio - 1.0).abs() > settings.clip_range).float()
        clip_fraction = masked_mean(clipped, mask)
    metrics = {
        "loss": float(loss.detach()),
        "policy_loss": float(policy_loss.detach()),
        "entropy": float(mean_entropy.detach()),
        "approx_kl": float(approx_kl),
        "clip_fraction": float(clip_fraction),
    }
    metrics.update({f"value_loss/{k}": float(v.detach()) for k, v in head_losses.items()})
    return PPOLossOutput(loss, metrics)


__all__ = [
    "PPOLossOutput",
    "PPOLossSettings",
    "ValueTerms",
    "clipped_surrogate",
    "combined_advantage",
    "masked_mean",
    "normalize_advantage",
    "ppo_loss",
    "value_loss",
]

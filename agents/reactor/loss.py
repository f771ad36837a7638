"""The Reactor loss from unrolled network outputs: Retrace critic + policy gradient.

Everything is time-major ``[T, B, ...]`` over whole sequences; ``learn`` marks the steps the
loss learns from (the caller leaves out the burn-in of sequences that do not start their
episode: :func:`agents.core.losses.learn_mask`). Targets only look forward, so the steps
left out change no target of the steps learned. Per step::

    pi      = softmax(policy_logits)                  the learner's policy (acting mixes it
                                                      with uniform: agents.reactor.acting)
    c_t     = lambda * min(trace_clip, pi(a_t|x_t) / mu(a_t|x_t))
    critic  expected:       Q_ret by Retrace on the target critic,
                            loss 0.5 (Q_ret - Q(x_t, a_t))^2, priority |Q_ret - Q(x_t, a_t)|
            distributional: q* by distributional Retrace on the target critic,
                            loss -sum_i q*_i log q_i(x_t, a_t), priority TV(q*, q(x_t, a_t)),
                            Q_ret = sum_i z_i q*_i
    policy  objective J_t = -[beta-LOO or TIS surrogate](R = Q_ret, Q = online critic)
                            + entropy_weight * H(pi(.|x_t))
            loss -sum w_t J_t, or ACER's trust region on J_t against the average policy

Steps are weighted ``w_{t,b} = learn_mask * is_weight_b / (count_b * B)``: a per-sequence
mean of the learned steps, then the importance-weighted batch mean (as the R2D2 loss does).
Demo steps need nothing special: their ``mu`` is 1 for the recorded action (see
:mod:`agents.reactor.retrace` and :mod:`agents.reactor.policy_gradient`).
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from agents.reactor.config import ReactorLossConfig
from agents.reactor.distributional import (
    atoms,
    categorical_cross_entropy,
    distributional_retrace_targets,
    total_variation,
)
from agents.reactor.policy_gradient import beta_loo_loss, entropy, tis_loss
from agents.reactor.retrace import retrace_targets, retrace_traces
from agents.reactor.trust_region import trust_region_loss


class ReactorLossInputs(NamedTuple):
    """Network outputs and stored steps over whole sequences of a batch, ``[T, B, ...]``."""

    policy_logits: torch.Tensor
    """``[T, B, A]`` online policy logits (with gradient)."""
    critic: torch.Tensor
    """Online critic (with gradient): ``[T, B, A]`` action values, or ``[T, B, A, N]`` atom
    logits when distributional."""
    target_critic: torch.Tensor
    """The target critic, same shape as ``critic`` (no gradient)."""
    average_logits: torch.Tensor | None
    """``[T, B, A]`` logits of the Polyak-averaged policy (needed with the trust region)."""
    action: torch.Tensor
    """``[T, B]`` int64 taken actions."""
    reward: torch.Tensor
    """``[T, B]`` rewards (clipped here when ``reward_clip``)."""
    terminal: torch.Tensor
    """``[T, B]`` 1 where the action ended the episode by termination."""
    mask: torch.Tensor
    """``[T, B]`` bool, real steps."""
    mu_taken: torch.Tensor
    """``[T, B]`` behaviour probability of the taken action (1 on demo steps)."""
    mu: torch.Tensor | None
    """``[T, B, A]`` whole behaviour distribution (one-hot on demo steps); needed by TIS."""
    weight: torch.Tensor
    """``[B]`` prioritized-replay importance weights."""
    learn: torch.Tensor | None = None
    """``[T, B]`` bool, the steps to learn from (None: every real step); the last position is
    never learned (it has no successor to bootstrap from)."""


class ReactorLossOutput(NamedTuple):
    loss: torch.Tensor
    """Scalar to minimise."""
    priority: torch.Tensor
    """``[T, B]`` per-step critic error for priorities (0 outside ``learn_mask``)."""
    learn_mask: torch.Tensor
    """``[T, B]`` bool, the steps the loss used (``learn`` and real steps, not the last
    position)."""
    metrics: dict[str, float]


def reactor_loss(
    inputs: ReactorLossInputs, cfg: ReactorLossConfig, discount: float
) -> ReactorLossOutput:
    """The Reactor's loss, its per-step priorities and metrics (see the module docstring)."""
    x = inputs
    dist = x.critic.dim() == 4
    if dist != cfg.distributional:
        raise ValueError(
            f"expected a {'[T, B, A, N]' if cfg.distributional else '[T, B, A]'} critic "
            f"(distributional={cfg.distributional}), got {tuple(x.critic.shape)}"
        )
    if cfg.trust_region and x.average_logits is None:
        raise ValueError("expected average_logits with the trust region on, got None")
    if cfg.policy_gradient == "tis" and x.mu is None:
        raise ValueError("expected the behaviour distribution mu [T, B, A] for TIS, got None")
    learn_mask = x.mask.clone() if x.learn is None else x.learn & x.mask
    learn_mask[-1] = False
    # Targets only look forward, so the rows before the first one any sequence learns (the
    # burn-in, when no sequence of the batch starts its episode) need not be computed at all
    # (the distributional target's cost grows with the square of the rows).
    rows = learn_mask.any(1)
    lo = int(rows.to(torch.int8).argmax()) if bool(rows.any()) else 0
    if lo > 0:
        cut = {f: getattr(x, f) for f in x._fields if f != "weight"}  # the [T, B, ...] fields
        x = x._replace(**{f: v[lo:] for f, v in cut.items() if v is not None})
    out = _loss(x, learn_mask[lo:], cfg, discount, dist)
    pad = (0, 0, lo, 0)
    return out._replace(priority=torch.nn.functional.pad(out.priority, pad), learn_mask=learn_mask)


def _loss(
    x: ReactorLossInputs,
    learn_mask: torch.Tensor,
    cfg: ReactorLossConfig,
    discount: float,
    dist: bool,
) -> ReactorLossOutput:
    """:func:`reactor_loss` over the rows from the first one any sequence learns."""
    reward = x.reward.clamp(-1.0, 1.0) if cfg.reward_clip else x.reward
    steps = learn_mask.to(reward.dtype)
    w = steps * (x.weight / steps.sum(0).clamp(min=1.0) / steps.shape[1]).unsqueeze(0)

    pi_const = torch.softmax(x.policy_logits.detach(), -1)  # evaluated policy: no gradient
    action = x.action.long().clamp(0, pi_const.shape[-1] - 1)
    taken = action.unsqueeze(-1)
    traces = retrace_traces(
        pi_const.gather(-1, taken).squeeze(-1), x.mu_taken, cfg.retrace_lambda, cfg.trace_clip
    )
    if dist:
        v_min, v_max = cfg.support
        z = atoms(cfg.num_atoms, v_min, v_max, reward.device).to(x.critic.dtype)
        target_probs = torch.softmax(x.target_critic.detach(), -1)
        q_star = distributional_retrace_targets(
            reward, x.terminal, x.mask, action, target_probs, pi_const, traces, discount,
            v_min, v_max,
        )  # fmt: skip
        log_q = torch.log_softmax(x.critic, -1)
        idx = taken.unsqueeze(-1).expand(*action.shape, 1, log_q.shape[-1])
        log_q_taken = log_q.gather(2, idx).squeeze(2)  # [T, B, N]
        critic_step = categorical_cross_entropy(q_star, log_q_taken)
        priority = total_variation(q_star, log_q_taken.detach().exp())
        q_values = (log_q.detach().exp() * z).sum(-1)  # [T, B, A]
        returns = (q_star * z).sum(-1)
    else:
        q_target = x.target_critic.detach()
        returns = retrace_targets(
            reward, x.terminal, x.mask, q_target.gather(-1, taken).squeeze(-1),
            (pi_const * q_target).sum(-1), traces, discount,
        )  # fmt: skip
        q_taken = x.critic.gather(-1, taken).squeeze(-1)
        critic_step = 0.5 * (returns - q_taken) ** 2
        priority = (returns - q_taken.detach()).abs()
        q_values = x.critic.detach()
    priority = priority * steps

    if cfg.policy_gradient == "beta_loo":
        pg = beta_loo_loss(x.policy_logits, action, x.mu_taken, returns, q_values, cfg.beta_clip)
    else:
        assert x.mu is not None  # checked above
        pg = tis_loss(x.policy_logits, action, x.mu, returns, q_values, cfg.tis_clip)
    ent = entropy(x.policy_logits)
    objective = -pg + cfg.entropy_weight * ent
    metrics: dict[str, float] = {}
    if cfg.trust_region:
        assert x.average_logits is not None  # checked above
        tr = trust_region_loss(
            objective, x.policy_logits, x.average_logits, w, cfg.trust_region_delta
        )
        policy_loss = tr.loss
        metrics["trust_region_active"] = float(tr.active.sum() / steps.sum().clamp(min=1.0))
    else:
        policy_loss = -(w * objective).sum()
    critic_loss = (w * critic_step).sum()
    loss = policy_loss + cfg.critic_loss_weight * critic_loss
    n = steps.sum().clamp(min=1.0)
    if dist:
        metrics["target_negative_mass"] = float(
            (q_star.clamp(max=0.0).sum(-1).abs() * steps).sum() / n
        )
    greedy_q = q_values.argmax(-1)
    metrics.update(
        pi_max=float((pi_const.max(-1).values * steps).sum() / n),
        pi_q_disagree=float(((pi_const.argmax(-1) != greedy_q).to(steps.dtype) * steps).sum() / n),
        q_gap=float(((q_values.max(-1).values - q_values.min(-1).values) * steps).sum() / n),
        loss=float(loss.detach()),
        critic_loss=float(critic_loss.detach()),
        policy_loss=float(policy_loss.detach()),
        entropy=float((ent.detach() * steps).sum() / n),
        retrace_mean=float((returns * steps).sum() / n),
        q_mean=float((q_values.gather(-1, taken).squeeze(-1) * steps).sum() / n),
        trace_mean=float((traces * steps).sum() / n),
    )
    return ReactorLossOutput(
        loss=loss, priority=priority.detach(), learn_mask=learn_mask, metrics=metrics
    )


__all__ = ["ReactorLossInputs", "ReactorLossOutput", "reactor_loss"]

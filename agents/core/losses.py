"""What the Q-learning losses share: value rescaling, n-step double-Q targets, the burn-in
unroll, the learned-step mask and the large-margin term.

Tensors are time-major ``[T, B]`` (``[T, B, A]`` for action values).
"""

from __future__ import annotations

import torch

from agents.core.batch import LearnerView, TorchBatch
from agents.core.networks import NetworkOutput, RecurrentNetwork


def value_rescale(x: torch.Tensor, eps: float = 1e-3) -> torch.Tensor:
    """h(x) = sign(x)(sqrt(|x| + 1) - 1) + eps x."""
    return torch.sign(x) * (torch.sqrt(torch.abs(x) + 1.0) - 1.0) + eps * x


def inverse_value_rescale(x: torch.Tensor, eps: float = 1e-3) -> torch.Tensor:
    """h^-1(x), the exact inverse of :func:`value_rescale`."""
    root = torch.sqrt(1.0 + 4.0 * eps * (torch.abs(x) + 1.0 + eps))
    return torch.sign(x) * (((root - 1.0) / (2.0 * eps)) ** 2 - 1.0)


def n_step_targets(
    reward: torch.Tensor,
    terminal: torch.Tensor,
    mask: torch.Tensor,
    bootstrap: torch.Tensor,
    discount: float,
    n: int,
    rescale_eps: float | None = 1e-3,
) -> torch.Tensor:
    """n-step targets ``[T, B]`` for every position of a sequence.

    ``reward``, ``terminal``, ``mask``: ``[T, B]`` (step ``t``'s action reward, whether it
    terminated, whether it is a real step); ``bootstrap``: ``[T, B]`` target-net value of
    each observation (already rescaled when ``rescale_eps`` is set). The sum stops early at
    the end of the real steps (then bootstraps from the observation there) and at the end
    of the sequence; a termination cuts the bootstrap.
    Target: ``h(sum_i gamma^i r_{t+i} + gamma^k h^-1(Q(s_{t+k})))`` with k <= n.
    """
    t_len = reward.shape[0]
    pad = (0, 0, 0, n)  # pad time (dim 0) at the end

    def windows(x: torch.Tensor) -> torch.Tensor:  # [T, B] -> [T, B, n]: x[t + i] at [t, :, i]
        return torch.nn.functional.pad(x, pad).unfold(0, n, 1)[:t_len]

    value = bootstrap if rescale_eps is None else inverse_value_rescale(bootstrap, rescale_eps)
    value = torch.nn.functional.pad(value, pad)
    # step t + i counts while every step t .. t + i is real (the sum stops at the first pad)
    alive = torch.cumprod(windows(mask.to(reward.dtype)), dim=-1)
    # gamma per counted step, and a termination cuts everything after it
    keep = discount * (1.0 - windows(terminal.to(reward.dtype)))
    keep = alive * keep + (1.0 - alive)  # steps not counted leave the product alone
    through = torch.cumprod(keep, dim=-1)  # gamma^(i+1) * not-terminated, up to step t + i
    before = torch.cat([torch.ones_like(through[..., :1]), through[..., :-1]], dim=-1)
    ret = (alive * before * windows(reward)).sum(-1)
    scale = through[..., -1]
    steps = alive.sum(-1).long()
    idx = (torch.arange(t_len, device=reward.device).unsqueeze(1) + steps).clamp(max=t_len + n - 1)
    boot = value.gather(0, idx)
    target = ret + scale * boot
    return target if rescale_eps is None else value_rescale(target, rescale_eps)


def large_margin_loss(q: torch.Tensor, action: torch.Tensor, margin: float) -> torch.Tensor:
    """``max_a [Q(s, a) + l(a_E, a)] - Q(s, a_E)`` per step, ``l = margin`` for ``a != a_E``.

    ``q``: ``[T, B, A]``; ``action``: ``[T, B]`` the demonstrator's actions; -> ``[T, B]``
    (zero exactly when the demo action's value beats every other by at least the margin).
    """
    penalty = torch.full_like(q, margin)
    penalty.scatter_(-1, action.unsqueeze(-1), 0.0)
    q_expert = q.gather(-1, action.unsqueeze(-1)).squeeze(-1)
    return (q + penalty).max(dim=-1).values - q_expert


def episode_starts(batch: TorchBatch) -> torch.Tensor:
    """``[B]`` bool: the sequence begins with its episode's first observation (no action
    before it), so its stored state is the episode's true initial state."""
    return batch.prev_action[0] < 0


def learn_mask(batch: TorchBatch, burn_in: int) -> torch.Tensor:
    """``[T, B]`` bool, the steps a loss learns from: real steps after the burn-in, and in a
    sequence that starts an episode every real step (nothing to burn in: without this the
    first ``burn_in`` steps of every episode would never be learned, most of an episode
    as short as a MiniGrid demo's)."""
    learn = batch.mask.clone()
    if burn_in > 0:
        learn[:burn_in] &= episode_starts(batch)
    return learn


def unroll(
    network: torch.nn.Module, batch: TorchBatch, burn_in: int, grad: bool = True
) -> NetworkOutput:
    """All heads ``[T, B, ...]`` over the whole sequence from the stored state; the first
    ``burn_in`` steps only refresh the state and carry no gradient, except in sequences
    that start an episode (see :func:`learn_mask`; all steps carry none when ``grad`` is
    False)."""

    def part(x: torch.Tensor | dict, lo: int, hi: int | None):
        if isinstance(x, dict):
            return {k: v[lo:hi] for k, v in x.items()}
        return x[lo:hi]

    if not grad:
        with torch.no_grad():
            return network(batch.obs, batch.prev_action, batch.prev_reward, batch.state)
    if isinstance(network, RecurrentNetwork):  # burn-in split inside the torso, heads once
        fresh = episode_starts(batch) if burn_in > 0 else None
        return network(batch.obs, batch.prev_action, batch.prev_reward, batch.state, burn_in, fresh)
    state, burn = batch.state, None
    if burn_in > 0:
        with torch.no_grad():
            burn = network(
                part(batch.obs, 0, burn_in),
                batch.prev_action[:burn_in],
                batch.prev_reward[:burn_in],
                state,
            )
            state = burn.state
    rest = network(
        part(batch.obs, burn_in, None),
        batch.prev_action[burn_in:],
        batch.prev_reward[burn_in:],
        state,
    )
    if burn is None:
        return rest
    heads = {k: torch.cat([burn.heads[k], v], dim=0) for k, v in rest.heads.items()}
    return NetworkOutput(heads, rest.state)


def q_values(
    learner: LearnerView, batch: TorchBatch, burn_in: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Online and target Q ``[T, B, A]`` (head ``q`` of ``main`` and of its target), the
    online one unrolled after ``burn_in`` steps without gradient."""
    q_target = unroll(learner.target, batch, 0, grad=False).q
    q_online = unroll(learner.network, batch, burn_in).q
    return q_online, q_target


__all__ = [
    "episode_starts",
    "inverse_value_rescale",
    "large_margin_loss",
    "learn_mask",
    "n_step_targets",
    "q_values",
    "unroll",
    "value_rescale",
]

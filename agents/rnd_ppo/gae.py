"""Generalised advantage estimation, GAE(lambda), for RND-PPO's two value heads.

A rollout is ``T`` steps from ``B`` environments, time-major. Step ``t`` of env ``b`` saw
observation ``o_t``, whose value is ``value[t, b]``; the action taken there earned
``reward[t, b]``; ``done[t, b] = 1`` when that action ended the episode (the env was then
reset, so ``o_{t+1}`` is the first observation of the next episode). ``bootstrap[b]`` is
the value of the observation after the last step, ``V(o_T)``::

    delta_t = r_t + gamma * (1 - d_t) * V(o_{t+1}) - V(o_t)
    A_t     = delta_t + gamma * lambda * (1 - d_t) * A_{t+1}        (A_T = 0)
    R_t     = A_t + V(o_t)                                          (the value target)

* **Extrinsic head** (:func:`extrinsic_gae`): episodic, ``d_t`` as recorded, so neither the
  return nor the advantage crosses an episode end.
* **Intrinsic head** (:func:`intrinsic_gae`): non-episodic (Burda et al. 2018, section
  2.3): ``d_t = 0`` everywhere, so the intrinsic return runs on into the next episode, as
  if an episode end were just another transition (dying is not free of novelty).

An episode cut by a time limit is best handled by adding ``gamma * V(final observation)``
to the extrinsic reward of the truncating step and marking it done (the reset observation
is not its successor).
"""

from __future__ import annotations

from typing import NamedTuple

import torch


class GAEOutput(NamedTuple):
    """Advantages and value targets, each ``[T, B]``."""

    advantages: torch.Tensor
    """``[T, B]`` A_t."""
    returns: torch.Tensor
    """``[T, B]`` R_t = A_t + V(o_t), the value head's regression target."""


def _check(reward: torch.Tensor, value: torch.Tensor, bootstrap: torch.Tensor) -> None:
    if reward.ndim != 2 or value.shape != reward.shape:
        raise ValueError(
            f"expected reward and value of the same shape [T, B], got {tuple(reward.shape)} "
            f"and {tuple(value.shape)}"
        )
    if bootstrap.shape != reward.shape[1:]:
        raise ValueError(
            f"expected bootstrap of shape [B] = {tuple(reward.shape[1:])}, "
            f"got {tuple(bootstrap.shape)}"
        )


def gae(
    reward: torch.Tensor,
    value: torch.Tensor,
    bootstrap: torch.Tensor,
    done: torch.Tensor,
    gamma: float,
    lam: float,
) -> GAEOutput:
    """GAE(lambda) over a ``[T, B]`` rollout (see the module docstring for the recursion).

    ``reward``, ``value``, ``done``: ``[T, B]``; ``bootstrap``: ``[B]`` = V(o_T). No gradient
    flows into the result."""
    _check(reward, value, bootstrap)
    if done.shape != reward.shape:
        raise ValueError(
            f"expected done of shape [T, B] = {tuple(reward.shape)}, got {tuple(done.shape)}"
        )
    with torch.no_grad():
        reward, value = reward.float(), value.float()
        not_done = 1.0 - done.float()
        next_value = torch.cat([value[1:], bootstrap.float().unsqueeze(0)], dim=0)
        delta = reward + gamma * not_done * next_value - value
        advantages = torch.zeros_like(reward)
        running = torch.zeros_like(bootstrap, dtype=reward.dtype)
        for t in range(reward.shape[0] - 1, -1, -1):
            running = delta[t] + gamma * lam * not_done[t] * running
            advantages[t] = running
        return GAEOutput(advantages, advantages + value)


def intrinsic_gae(
    reward: torch.Tensor,
    value: torch.Tensor,
    bootstrap: torch.Tensor,
    gamma: float,
    lam: float,
) -> GAEOutput:
    """Non-episodic GAE for the intrinsic head: episode ends are ignored (``done = 0``)."""
    _check(reward, value, bootstrap)
    return gae(reward, value, bootstrap, torch.zeros_like(reward), gamma, lam)


extrinsic_gae = gae
"""Episodic GAE for the extrinsic head: :func:`gae`, stopping at every ``done[t, b] = 1``."""


def segment_gae(
    reward: torch.Tensor,
    value: torch.Tensor,
    mask: torch.Tensor,
    terminal: torch.Tensor | None,
    gamma: float,
    lam: float,
) -> GAEOutput:
    """GAE over ``[S, B]`` segments as the actors cut them (they never cross an episode):
    ``reward``, ``terminal``: ``[S, B]``; ``value``, ``mask``: ``[S + 1, B]``, the value of
    every observation of the segment, the last one included, and the real steps.

    The last real step ``t`` of a segment (its end, or the episode's end followed by
    padding) bootstraps with the value of the observation after it: ``r_t + gamma *
    (1 - terminal_t) * V(o_{t+1})``, folded into its reward so :func:`gae` stops there.
    ``terminal`` None: the non-episodic intrinsic return, which no episode end stops (it
    bootstraps from ``value`` after the last real step; after a terminal step RND-PPO puts
    the start states' mean there, :func:`agents.rnd_ppo.rollout.after_terminal`). Padding
    gets advantage 0."""
    if value.shape[0] != reward.shape[0] + 1 or mask.shape != value.shape:
        raise ValueError(
            f"expected value and mask of shape [S + 1, B] for reward [S, B] = "
            f"{tuple(reward.shape)}, got {tuple(value.shape)} and {tuple(mask.shape)}"
        )
    with torch.no_grad():
        real = mask[:-1].float()
        last = real * (1.0 - mask[1:].float())
        keep = torch.ones_like(real) if terminal is None else 1.0 - terminal.float()
        reward = reward.float() * real + last * gamma * keep * value[1:].float()
        done = torch.clamp((1.0 - real) + last + (1.0 - keep), max=1.0)
        out = gae(reward, value[:-1].float() * real, torch.zeros_like(reward[0]), done, gamma, lam)
        return GAEOutput(out.advantages * real, out.returns * real)


"""Episodic GAE for the extrinsic head: :func:`gae`, stopping at every ``done[t, b] = 1``."""


__all__ = ["GAEOutput", "extrinsic_gae", "gae", "intrinsic_gae", "segment_gae"]

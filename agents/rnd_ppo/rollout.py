"""What RND-PPO does with a rollout before its epochs (``Agent.on_rollout``): the
intrinsic rewards, both heads' advantages and returns, and the normalisation statistics.

A rollout arrives as segments ``[B, S + 1]`` cut by the actors (never crossing an episode;
the last position holds the observation after the segment, for the bootstrap value). The
values are recomputed with the current network (the one that acted, the weights having been
synced after the last epochs) at every observation, the bootstrap ones included::

    r_int[t]   = e(x_{t+1}) / std(R_int)       RND error of the next observation, scaled by
                                               the running std of each env's discounted
                                               intrinsic return (followed across segments)
    A_ext, R_ext = segment_gae(scale * clip(r_ext), V_ext, episodic, gamma_ext)
    A_int, R_int = segment_gae(r_int, V_int, non-episodic, gamma_int)
    A          = ext_coef * A_ext + int_coef * A_int

Non-episodic means the intrinsic return runs on into the next episode: after a terminal
step the successor is a fresh start state, so the step bootstraps with the mean V_int of the
rollout's episode-start observations (:func:`after_terminal`), not with V_int of the
terminal observation. That observation is never a regression target (its position is
padding) and may lie where no trained state is (MountainCar's flag): bootstrapping from it
lets V_int grow without bound (on MountainCar its mean grows a hundredfold over 100k steps
while the intrinsic rewards stay near 0.001).

The observation statistics are then updated with the rollout's next observations (each
observation once), after the rewards that used the previous statistics.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from agents.rnd_ppo.gae import segment_gae
from agents.rnd_ppo.normalize import IntrinsicRewardScaler
from agents.rnd_ppo.ppo_loss import combined_advantage


class RolloutTargets(NamedTuple):
    """Per-step training targets, each ``[S, B]`` (time-major)."""

    advantage: torch.Tensor
    ret_ext: torch.Tensor
    value_ext: torch.Tensor
    ret_int: torch.Tensor | None
    value_int: torch.Tensor | None
    reward_int: torch.Tensor | None
    """The scaled intrinsic rewards (None without RND)."""


def scale_by_stream(
    scaler: IntrinsicRewardScaler, raw: np.ndarray, real: np.ndarray, env: np.ndarray
) -> np.ndarray:
    """``[S, B]`` raw intrinsic rewards of segments -> scaled ones.

    Segment ``b`` came from env ``env[b]``; an env's segments appear in the batch in the
    order they were taken, so its steps are followed in time: ``R = gamma * R + r`` per
    env (never reset), every ``R`` merged into the running variance, then ``r / std(R)``."""
    returns = []
    filt = scaler.filter
    for b in range(raw.shape[1]):
        e = int(env[b])
        for r in raw[real[:, b], b]:
            filt.returns[e] = filt.returns[e] * filt.gamma + float(r)
            returns.append(filt.returns[e])
    if returns:
        scaler.rms.update(np.asarray(returns, np.float64))
    return (raw / float(np.sqrt(scaler.rms.var + scaler.eps))) * real


def after_terminal(
    value: torch.Tensor, terminal: torch.Tensor, start_value: float | None
) -> torch.Tensor:
    """``value`` ``[S + 1, B]`` with the observation after every terminal step (``terminal``
    ``[S, B]``) valued ``start_value``, the bootstrap the non-episodic intrinsic return
    takes there (None: unchanged)."""
    if start_value is None:
        return value
    out = value.clone()
    out[1:] = torch.where(terminal.bool(), torch.full_like(value[1:], start_value), value[1:])
    return out


def rollout_targets(
    cfg,
    value_ext: torch.Tensor,
    value_int: torch.Tensor | None,
    reward: torch.Tensor,
    terminal: torch.Tensor,
    mask: torch.Tensor,
    reward_int: torch.Tensor | None,
    start_int: float | None = None,
) -> RolloutTargets:
    """``value_*``, ``mask``: ``[S + 1, B]``; ``reward``, ``terminal``, ``reward_int``:
    ``[S, B]``. Extrinsic rewards are clipped to ``+-cfg.ext_reward_clip`` (0: not), then
    multiplied by ``cfg.ext_reward_scale``. ``start_int``: the mean V_int of the rollout's
    episode-start observations, the intrinsic bootstrap after a terminal step (None: none
    in the rollout, V_int of the terminal observation is used)."""
    if cfg.ext_reward_clip > 0:
        reward = reward.clamp(-cfg.ext_reward_clip, cfg.ext_reward_clip)
    reward = reward * cfg.ext_reward_scale
    ext = segment_gae(reward, value_ext, mask, terminal, cfg.gamma_ext, cfg.gae_lambda)
    s = reward.shape[0]
    if value_int is None or reward_int is None:
        adv = combined_advantage(ext.advantages, None, cfg.ext_coef, cfg.int_coef)
        return RolloutTargets(adv, ext.returns, value_ext[:s], None, None, None)
    boot = after_terminal(value_int, terminal, start_int)
    intr = segment_gae(reward_int, boot, mask, None, cfg.gamma_int, cfg.gae_lambda)
    adv = combined_advantage(ext.advantages, intr.advantages, cfg.ext_coef, cfg.int_coef)
    return RolloutTargets(adv, ext.returns, value_ext[:s], intr.returns, value_int[:s], reward_int)


__all__ = ["RolloutTargets", "after_terminal", "rollout_targets", "scale_by_stream"]

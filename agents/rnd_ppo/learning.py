"""RND-PPO's losses on a minibatch of whole segments (``[S + 1, B]`` time-major, the last
position only an observation): PPO's clipped objective with one or two value heads
(:mod:`agents.rnd_ppo.ppo_loss`), the RND predictor on a share of the next observations,
and the behaviour-cloning term on demo segments (pre-training, and the annealed extra)."""

from __future__ import annotations

import torch

from agents.core.batch import TorchBatch
from agents.rnd_ppo.acting import LOGITS, policy_terms
from agents.rnd_ppo.ppo_loss import ValueTerms, masked_mean, ppo_loss
from agents.rnd_ppo.rnd import RND, IntrinsicReward


def rnd_input(obs: torch.Tensor, frames: int) -> torch.Tensor:
    """The RND networks' view of a leaf: the last ``frames`` of stacked frames
    ``[..., k, H, W]`` (images of more than ``frames`` channels), else the leaf itself."""
    if obs.ndim >= 3 and obs.shape[-3] > frames and min(obs.shape[-2:]) >= 32:
        return obs[..., -frames:, :, :]
    return obs


def bc_terms(network: torch.nn.Module, batch: TorchBatch) -> tuple[torch.Tensor, torch.Tensor]:
    """(mean cross-entropy of the demo actions, accuracy) over the real steps of demo
    segments."""
    out = network(batch.obs, batch.prev_action, batch.prev_reward, batch.state)
    s = batch.action.shape[0] - 1
    logits, action, mask = out.heads[LOGITS][:s], batch.action[:s], batch.mask[:s]
    log_prob, _ = policy_terms(logits, action)
    accuracy = masked_mean((logits.argmax(-1) == action).float(), mask)
    return -masked_mean(log_prob, mask), accuracy


def ppo_terms(
    cfg, network: torch.nn.Module, batch: TorchBatch, intrinsic: bool
) -> tuple[torch.Tensor, dict[str, float]]:
    """PPO's loss (policy, value heads, entropy) and its metrics."""
    out = network(batch.obs, batch.prev_action, batch.prev_reward, batch.state)
    s = batch.action.shape[0] - 1
    mask, ex = batch.mask[:s], batch.extras
    log_prob, entropy = policy_terms(out.heads[LOGITS][:s], batch.action[:s])
    values = {"ext": ValueTerms(out.heads["value_ext"][:s], ex["value_ext"][:s], ex["ret_ext"][:s])}
    if intrinsic:
        values["int"] = ValueTerms(
            out.heads["value_int"][:s], ex["value_int"][:s], ex["ret_int"][:s]
        )
    res = ppo_loss(log_prob, ex["log_prob"][:s], entropy, ex["advantage"][:s], values, cfg, mask)
    return res.loss, res.metrics


def predictor_terms(
    irw: IntrinsicReward,
    rnd: RND,
    batch: TorchBatch,
    leaf: str,
    frames: int,
    share: float,
    generator: torch.Generator,
) -> torch.Tensor:
    """The RND predictor's loss on a ``share`` of the next observations of the real steps."""
    mask = batch.mask[:-1]
    nxt = rnd_input(batch.obs[leaf][1:], frames)[mask]
    return irw.loss(rnd, nxt, share, generator)


__all__ = ["bc_terms", "ppo_terms", "predictor_terms", "rnd_input"]

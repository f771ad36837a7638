"""RND's part of the on-policy actor-critic (``--intrinsic``): which observation leaf the
RND networks read, the networks (built with the policy's, held by the learner as
``rnd_target`` and ``rnd_predictor``) and, in :class:`RNDBonus`, what RND keeps between
rollouts and does with them: intrinsic rewards for a rollout, the predictor's loss term,
the observation statistics taken from random steps before training, and their state for
checkpoints."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from agents.core.agent import EnvInfo
from agents.core.batch import TorchBatch
from agents.core.obs_norm import random_policy_observations
from agents.core.preprocess import spatial_leaves
from agents.core.sequences import SequenceBatch
from agents.rnd_ppo.config import RNDPPOConfig
from agents.rnd_ppo.full_grid import FULL_GRID
from agents.rnd_ppo.learning import predictor_terms, rnd_input
from agents.rnd_ppo.rnd import RND, IntrinsicReward
from agents.rnd_ppo.rollout import scale_by_stream

TARGET, PREDICTOR = "rnd_target", "rnd_predictor"
"""The learner's names of the RND networks."""


def rnd_leaf(cfg: RNDPPOConfig, info: EnvInfo) -> str:
    """The observation leaf the RND networks read: the whole grid with --rnd-full-grid,
    --rnd-leaf, the only leaf, or the only image/grid leaf."""
    if cfg.rnd_full_grid:
        return FULL_GRID
    spec = info.preprocess.spec
    if cfg.rnd_leaf:
        if cfg.rnd_leaf not in spec:
            raise ValueError(f"--rnd-leaf: expected one of {sorted(spec)}, got {cfg.rnd_leaf!r}")
        return cfg.rnd_leaf
    if len(spec) == 1:
        return next(iter(spec))
    images = spatial_leaves(spec)
    if len(images) != 1:
        raise ValueError(
            f"--rnd-leaf: expected a leaf name for observations of {sorted(spec)}, got none"
        )
    return images[0]


def rnd_shape(cfg: RNDPPOConfig, info: EnvInfo) -> tuple[int, ...]:
    """The shape of one observation as the RND networks read it."""
    leaf = info.preprocess.spec[rnd_leaf(cfg, info)]
    return tuple(rnd_input(torch.zeros(1, *leaf.shape), cfg.rnd_frame_stack).shape[1:])


def rnd_networks(cfg: RNDPPOConfig, info: EnvInfo) -> dict[str, torch.nn.Module]:
    """New RND networks by the learner's names (the frozen target, then the predictor)."""
    rnd = RND.build(rnd_shape(cfg, info), cfg.rnd_embed_dim, cfg.rnd_hidden)
    return {TARGET: rnd.target, PREDICTOR: rnd.predictor}


def rnd_of(networks: Mapping[str, torch.nn.Module]) -> RND:
    """The learner's RND networks, viewed together."""
    return RND(networks[TARGET], networks[PREDICTOR])


class RNDBonus:
    """RND's statistics for one run (made by the agent's ``configure``) and what the agent
    asks of RND; the networks are always the learner's, passed in."""

    def __init__(self, cfg: RNDPPOConfig, info: EnvInfo):
        self.cfg = cfg
        self.leaf = rnd_leaf(cfg, info)
        """The observation leaf the RND networks read."""
        self.reward = IntrinsicReward(rnd_shape(cfg, info), cfg.total_envs, cfg.gamma_int,
                                      cfg.obs_norm_clip)  # fmt: skip

    def observe_random_steps(
        self, make_env: Callable[[], gym.Env], preprocess: Callable, num_actions: int
    ) -> int:
        """A fresh run's observation statistics from --obs-norm-init-steps random-policy
        steps per env; the steps taken (0: statistics already there, or none asked)."""
        cfg = self.cfg
        if self.reward.obs_norm.rms.count > 0 or not cfg.obs_norm_init_steps:
            return 0
        for obs in random_policy_observations(make_env, cfg.num_envs, cfg.obs_norm_init_steps,
                                              num_actions, cfg.seed):  # fmt: skip
            x = preprocess(obs)[self.leaf]
            self.reward.observe(rnd_input(torch.from_numpy(np.asarray(x)), cfg.rnd_frame_stack))
        return cfg.obs_norm_init_steps * cfg.num_envs

    def rollout_rewards(
        self, networks: Mapping[str, torch.nn.Module], tb: TorchBatch, batch: SequenceBatch
    ) -> tuple[torch.Tensor, dict[str, float]]:
        """``[S, B]`` scaled intrinsic rewards of a rollout's segments (``tb``: the same
        segments on the learner's device) and their means over the real steps; the
        statistics then take in the rollout's next observations."""
        real = batch.mask[:, :-1].T  # [S, B]
        nxt = rnd_input(tb.obs[self.leaf][1:], self.cfg.rnd_frame_stack)  # [S, B, ...]
        raw = self.reward.raw(rnd_of(networks), nxt).cpu().numpy()
        env = batch.extras["env"][:, 0].astype(np.int64)
        scaled = scale_by_stream(self.reward.scaler, raw, real, env)
        reward_int = torch.from_numpy(scaled.astype(np.float32)).to(tb.action.device)
        self.reward.observe(nxt[torch.from_numpy(real).to(tb.action.device)])
        metrics = {}
        if real.any():
            metrics = {"intrinsic_reward": float(scaled[real].mean()),
                       "intrinsic_raw": float(raw[real].mean())}  # fmt: skip
        return reward_int, metrics

    def loss(
        self,
        networks: Mapping[str, torch.nn.Module],
        batch: TorchBatch,
        generator: torch.Generator,
    ) -> torch.Tensor:
        """The predictor's loss on a share (--update-proportion) of the minibatch's next
        observations."""
        cfg = self.cfg
        return predictor_terms(self.reward, rnd_of(networks), batch, self.leaf,
                               cfg.rnd_frame_stack, cfg.update_proportion, generator)  # fmt: skip

    def state_dict(self) -> dict[str, Any]:
        return self.reward.state_dict()

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.reward.load_state_dict(state)


__all__ = [
    "PREDICTOR",
    "TARGET",
    "RNDBonus",
    "rnd_leaf",
    "rnd_networks",
    "rnd_of",
    "rnd_shape",
]

"""RND-PPO's intrinsic reward: the core's RND networks (:mod:`agents.core.rnd`, e(x) the
predictor's error on normalised observations) with the paper's scaling::

    r_int,t   = e(x_{t+1}) / std(R_int)                      R_int: discounted intrinsic return

The intrinsic reward of step t is the novelty of the observation the action led to
(``x_{t+1}``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from agents.core.rnd import RND, build_predictor, build_target, is_image_shape
from agents.core.running_stats import ObservationNormalizer
from agents.rnd_ppo.normalize import IntrinsicRewardScaler


class IntrinsicReward:
    """Everything RND keeps between rollouts: the networks, the observation normaliser
    and the intrinsic reward scaler, with one state dict for checkpoints."""

    def __init__(
        self,
        shape: tuple[int, ...],
        num_envs: int,
        gamma_int: float,
        obs_clip: float = 5.0,
        embed_dim: int = 512,
        hidden: int = 256,
    ):
        self.rnd = RND(shape, embed_dim, hidden)
        self.obs_norm = ObservationNormalizer(tuple(shape), obs_clip)
        self.scaler = IntrinsicRewardScaler(gamma_int, num_envs)

    def observe(self, obs: np.ndarray | torch.Tensor) -> None:
        """Merge ``[N, *shape]`` raw observations into the normalisation statistics."""
        self.obs_norm.update(obs)

    @torch.no_grad()
    def raw(self, next_obs: torch.Tensor) -> torch.Tensor:
        """``[T, B, *shape]`` raw next observations -> ``[T, B]`` unscaled e(x_{t+1})."""
        t, b = next_obs.shape[:2]
        x = self.obs_norm(next_obs.reshape(t * b, *next_obs.shape[2:]))
        return self.rnd.prediction_error(x).reshape(t, b)

    def rewards(self, next_obs: torch.Tensor) -> torch.Tensor:
        """``[T, B, *shape]`` raw next observations of a rollout -> ``[T, B]`` intrinsic
        rewards, scaled by the running std of the intrinsic return (updates the scaler)."""
        return self.scaler(self.raw(next_obs))

    def loss(
        self,
        obs: torch.Tensor,
        update_proportion: float,
        generator: torch.Generator | None = None,
    ) -> torch.Tensor:
        """Predictor loss on ``[N, *shape]`` raw observations (normalised here)."""
        return self.rnd.predictor_loss(self.obs_norm(obs), update_proportion, generator)

    def state_dict(self) -> dict[str, Any]:
        return {
            "rnd": self.rnd.state_dict(),
            "obs_norm": self.obs_norm.state_dict(),
            "scaler": self.scaler.state_dict(),
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        for key in ("rnd", "obs_norm", "scaler"):
            if key not in state:
                raise ValueError(f"expected key {key!r} in the RND state, got {sorted(state)}")
        self.rnd.load_state_dict(state["rnd"])
        self.obs_norm.load_state_dict(state["obs_norm"])
        self.scaler.load_state_dict(state["scaler"])


__all__ = ["RND", "IntrinsicReward", "build_predictor", "build_target", "is_image_shape"]

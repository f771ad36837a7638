"""Random Network Distillation (Burda et al. 2018): a fixed random target network f and a
trained predictor f_hat over normalised observations x (``[N, *shape]``)::

    e(x)      = mean_k (f_hat(x)_k - f(x)_k)^2              prediction error, [N]
    r_int,t   = e(x_{t+1}) / std(R_int)                      R_int: discounted intrinsic return
    L_rnd     = sum_i m_i e(x_i) / max(sum_i m_i, 1)         m_i ~ Bernoulli(update_proportion)

The intrinsic reward of step t is the novelty of the observation the action led to
(``x_{t+1}``). Images ``[C, H, W]`` (C stacked grey frames, H, W >= 32) go through the
paper's convolutional networks; anything else is flattened into an MLP. The target's
parameters never receive a gradient (``requires_grad`` False); optimise only
``rnd.predictor.parameters()``. The learner holds the two networks (``rnd_target``,
``rnd_predictor``), so checkpoints keep the target and a resumed run has the same random
features; :class:`IntrinsicReward` keeps the statistics RND needs between rollouts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.rnd_ppo.normalize import IntrinsicRewardScaler, ObservationNormalizer


def is_image_shape(shape: tuple[int, ...]) -> bool:
    """``[C, H, W]`` with a few channels and H, W >= 32: the convolutional networks."""
    return len(shape) == 3 and shape[0] <= 16 and min(shape[1:]) >= 32


def _init(module: nn.Module, gain: float = math.sqrt(2)) -> nn.Module:
    for m in module.modules():
        if isinstance(m, (nn.Linear, nn.Conv2d)):
            nn.init.orthogonal_(m.weight, gain)
            nn.init.zeros_(m.bias)
    return module


def _conv_trunk(channels: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(channels, 32, 8, stride=4),
        nn.LeakyReLU(),
        nn.Conv2d(32, 64, 4, stride=2),
        nn.LeakyReLU(),
        nn.Conv2d(64, 64, 3, stride=1),
        nn.LeakyReLU(),
        nn.Flatten(),
    )


def _trunk(shape: tuple[int, ...], hidden: int) -> tuple[nn.Sequential, int]:
    """Feature extractor for one observation shape and its output width."""
    if is_image_shape(shape):
        trunk = _conv_trunk(shape[0])
        with torch.no_grad():
            width = trunk(torch.zeros(1, *shape)).shape[1]
        return trunk, int(width)
    n_in = int(np.prod(shape))
    trunk = nn.Sequential(nn.Flatten(), nn.Linear(n_in, hidden), nn.LeakyReLU())
    return trunk, hidden


def build_target(shape: tuple[int, ...], embed_dim: int, hidden: int) -> nn.Module:
    """The fixed random network f: trunk -> Linear(embed_dim), frozen."""
    trunk, width = _trunk(shape, hidden)
    net = _init(nn.Sequential(trunk, nn.Linear(width, embed_dim)))
    return net.requires_grad_(False)


def build_predictor(shape: tuple[int, ...], embed_dim: int, hidden: int) -> nn.Module:
    """The trained predictor f_hat: the same trunk and two more ReLU layers (more capacity
    than the target, as in the paper)."""
    trunk, width = _trunk(shape, hidden)
    head = nn.Sequential(
        nn.Linear(width, hidden),
        nn.ReLU(),
        nn.Linear(hidden, hidden),
        nn.ReLU(),
        nn.Linear(hidden, embed_dim),
    )
    return _init(nn.Sequential(trunk, head))


class RND(nn.Module):
    """The target f and the predictor f_hat, viewed together (the modules are not copied)."""

    def __init__(self, target: nn.Module, predictor: nn.Module):
        super().__init__()
        self.target = target
        self.predictor = predictor

    @classmethod
    def build(cls, shape: tuple[int, ...], embed_dim: int = 512, hidden: int = 256) -> RND:
        """New networks for normalised observations of ``shape``: the target, then the
        predictor."""
        shape = tuple(shape)
        return cls(
            build_target(shape, embed_dim, hidden), build_predictor(shape, embed_dim, hidden)
        )

    def prediction_error(self, obs: torch.Tensor) -> torch.Tensor:
        """``[N, *shape]`` normalised observations -> ``[N]`` e(x) (grad into the predictor)."""
        with torch.no_grad():
            target = self.target(obs)
        return ((self.predictor(obs) - target) ** 2).mean(dim=-1)

    def predictor_loss(
        self,
        obs: torch.Tensor,
        update_proportion: float,
        generator: torch.Generator | None = None,
    ) -> torch.Tensor:
        """Masked mean of e(x) over a random ``update_proportion`` share of ``[N, *shape]``
        (each sample kept with that probability; the mask is drawn on the CPU)."""
        err = self.prediction_error(obs)
        keep = torch.rand(err.shape[0], generator=generator) < update_proportion
        keep = keep.to(err.device, err.dtype)
        return (err * keep).sum() / keep.sum().clamp(min=1.0)


class IntrinsicReward:
    """What RND keeps between rollouts besides the networks: the observation normaliser
    and the intrinsic reward scaler, with one state dict for checkpoints."""

    def __init__(self, shape: tuple[int, ...], num_envs: int, gamma_int: float,
                 obs_clip: float = 5.0):  # fmt: skip
        self.shape = tuple(shape)
        self.obs_norm = ObservationNormalizer(self.shape, obs_clip)
        self.scaler = IntrinsicRewardScaler(gamma_int, num_envs)

    def observe(self, obs: np.ndarray | torch.Tensor) -> None:
        """Merge ``[N, *shape]`` raw observations into the normalisation statistics."""
        self.obs_norm.update(obs)

    @torch.no_grad()
    def raw(self, rnd: RND, next_obs: torch.Tensor) -> torch.Tensor:
        """``[T, B, *shape]`` raw next observations -> ``[T, B]`` unscaled e(x_{t+1})."""
        t, b = next_obs.shape[:2]
        x = self.obs_norm(next_obs.reshape(t * b, *next_obs.shape[2:]))
        return rnd.prediction_error(x).reshape(t, b)

    def rewards(self, rnd: RND, next_obs: torch.Tensor) -> torch.Tensor:
        """``[T, B, *shape]`` raw next observations of a rollout -> ``[T, B]`` intrinsic
        rewards, scaled by the running std of the intrinsic return (updates the scaler)."""
        return self.scaler(self.raw(rnd, next_obs))

    def loss(
        self,
        rnd: RND,
        obs: torch.Tensor,
        update_proportion: float,
        generator: torch.Generator | None = None,
    ) -> torch.Tensor:
        """Predictor loss on ``[N, *shape]`` raw observations (normalised here)."""
        return rnd.predictor_loss(self.obs_norm(obs), update_proportion, generator)

    def state_dict(self) -> dict[str, Any]:
        return {"obs_norm": self.obs_norm.state_dict(), "scaler": self.scaler.state_dict()}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """What :meth:`state_dict` gave (a checkpoint's ``agent_state``)."""
        for key in ("obs_norm", "scaler"):
            if key not in state:
                raise ValueError(
                    f"agent_state: expected {key!r} (RND statistics), got {sorted(state)}"
                )
        self.obs_norm.load_state_dict(state["obs_norm"])
        self.scaler.load_state_dict(state["scaler"])


__all__ = ["RND", "IntrinsicReward", "build_predictor", "build_target", "is_image_shape"]

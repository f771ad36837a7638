"""Random Network Distillation networks (Burda et al. 2018): a fixed random target network f
and a trained predictor f_hat over normalised observations x (``[N, *shape]``)::

    e(x)      = mean_k (f_hat(x)_k - f(x)_k)^2              prediction error, [N]
    L_rnd     = sum_i m_i e(x_i) / max(sum_i m_i, 1)         m_i ~ Bernoulli(update_proportion)

e(x) is large on observations unlike those the predictor was trained on: RND-PPO's intrinsic
reward (:mod:`agents.rnd_ppo.rnd`) and the Reactor's novelty cost
(:mod:`agents.reactor.novelty`). Images ``[C, H, W]`` (C stacked grey frames, H, W >= 32) go
through the paper's convolutional networks; anything else is flattened into an MLP. The
target's parameters never receive a gradient (``requires_grad`` False); optimise only
``rnd.predictor.parameters()``. The target stays in the state dict, so a resumed run keeps
the same random features.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn


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
    """Target and predictor for normalised observations of shape ``shape``."""

    def __init__(self, shape: tuple[int, ...], embed_dim: int = 512, hidden: int = 256):
        super().__init__()
        self.shape = tuple(shape)
        self.target = build_target(self.shape, embed_dim, hidden)
        self.predictor = build_predictor(self.shape, embed_dim, hidden)

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


__all__ = ["RND", "build_predictor", "build_target", "is_image_shape"]

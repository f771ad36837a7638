"""Running statistics for RND: observation normalisation and intrinsic reward scaling.

* :class:`RunningMeanStd` (the core's, :mod:`agents.core.running_stats`): mean and
  (population) variance of a stream of batches.
* :class:`ObservationNormalizer`: ``clip((x - mean) / sqrt(var + 1e-8), -5, 5)`` per
  element, the predictor's and target's input (Burda et al. 2018, section 2.4).
* :class:`RewardForwardFilter` and :class:`IntrinsicRewardScaler`: the intrinsic reward is
  divided by the running standard deviation of the *discounted intrinsic return*
  ``R_t = gamma_int * R_{t-1} + r_t`` (per env, never reset: non-episodic).

Every ``state_dict`` holds only tensors and plain numbers, so it round-trips through
``torch.save`` and ``torch.load(..., weights_only=True)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from agents.core.running_stats import ArrayLike, RunningMeanStd, array_from_state, numpy64


class ObservationNormalizer:
    """``clip((x - mean) / sqrt(var + 1e-8), -clip, clip)`` with running statistics.

    ``x``: ``[N, *shape]`` (any leading dims for :meth:`__call__`); returns float32 on the
    input's device. Statistics are updated only by :meth:`update` (random-policy steps
    first, then every rollout)."""

    def __init__(self, shape: tuple[int, ...], clip: float = 5.0, eps: float = 1e-8):
        if clip <= 0:
            raise ValueError(f"expected an observation clip > 0, got {clip}")
        self.rms = RunningMeanStd(shape)
        self.clip = float(clip)
        self.eps = float(eps)
        self._cache: dict[torch.device, tuple[torch.Tensor, torch.Tensor]] = {}

    def update(self, x: ArrayLike) -> None:
        self.rms.update(x)
        self._cache.clear()

    def _stats(self, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        if device not in self._cache:
            mean = torch.as_tensor(self.rms.mean, dtype=torch.float32, device=device)
            scale = torch.as_tensor(np.sqrt(self.rms.var + self.eps), dtype=torch.float32)
            self._cache[device] = (mean, scale.to(device))
        return self._cache[device]

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """``[..., *shape]`` -> normalised, clipped float32 of the same shape."""
        if tuple(x.shape[x.ndim - len(self.rms.shape) :]) != self.rms.shape:
            raise ValueError(
                f"expected observations ending in shape {self.rms.shape}, got {tuple(x.shape)}"
            )
        mean, scale = self._stats(x.device)
        return ((x.float() - mean) / scale).clamp(-self.clip, self.clip)

    def state_dict(self) -> dict[str, Any]:
        return self.rms.state_dict()

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.rms.load_state_dict(state)
        self._cache.clear()


class RewardForwardFilter:
    """Per-env discounted running return ``R_t = gamma * R_{t-1} + r_t`` (``[B]``), never
    reset at episode ends (the intrinsic return is non-episodic)."""

    def __init__(self, gamma: float, num_envs: int):
        self.gamma = float(gamma)
        self.returns = np.zeros(num_envs, np.float64)

    def update(self, rewards: ArrayLike) -> np.ndarray:
        """``rewards``: ``[B]`` -> the updated returns ``[B]`` (a copy)."""
        r = numpy64(rewards)
        if r.shape != self.returns.shape:
            raise ValueError(f"expected rewards of shape {self.returns.shape}, got {r.shape}")
        self.returns = self.returns * self.gamma + r
        return self.returns.copy()


class IntrinsicRewardScaler:
    """Divides raw intrinsic rewards by the running std of the discounted intrinsic return.

    For a rollout ``r`` of ``[T, B]`` raw rewards: run the forward filter through time
    (R_t for every t and env), merge all ``T * B`` returns into the running statistics,
    then return ``r / sqrt(var(R))`` (the mean of R is not subtracted: the reward keeps
    its sign and zero)."""

    def __init__(self, gamma: float, num_envs: int, eps: float = 1e-8):
        self.filter = RewardForwardFilter(gamma, num_envs)
        self.rms = RunningMeanStd(())
        self.eps = float(eps)

    def __call__(self, rewards: torch.Tensor) -> torch.Tensor:
        """``[T, B]`` raw rewards -> ``[T, B]`` scaled rewards (same dtype and device)."""
        if rewards.ndim != 2:
            raise ValueError(f"expected intrinsic rewards of shape [T, B], got {rewards.shape}")
        returns = np.stack([self.filter.update(r) for r in numpy64(rewards)])
        self.rms.update(returns.reshape(-1))
        return rewards / float(np.sqrt(self.rms.var + self.eps))

    def state_dict(self) -> dict[str, Any]:
        return {"returns": torch.from_numpy(self.filter.returns.copy()), **self.rms.state_dict()}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """A run resumed with another number of envs (--actor-procs may change) keeps the
        returns of the envs both have; new envs start from 0."""
        n = self.filter.returns.shape[0]
        value = state.get("returns")
        saved = (
            len(value) if isinstance(value, (torch.Tensor, np.ndarray)) and value.ndim == 1 else n
        )
        returns = np.zeros(n, np.float64)
        returns[: min(n, saved)] = array_from_state(state, "returns", (saved,))[:n]
        self.filter.returns = returns
        self.rms.load_state_dict(state)


__all__ = [
    "IntrinsicRewardScaler",
    "ObservationNormalizer",
    "RewardForwardFilter",
    "RunningMeanStd",
]

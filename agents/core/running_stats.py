"""Running mean and variance of a stream of batches (:class:`RunningMeanStd`), in float64,
merged with Chan et al.'s parallel update: for the seen data (n, m, v) and a batch
(n_b, m_b, v_b), with d = m_b - m and N = n + n_b::

    m' = m + d * n_b / N
    v' = (v * n + v_b * n_b + d^2 * n * n_b / N) / N

so after any split of the data the statistics equal those of the concatenated data. Used by
the core's input standardisation (:mod:`agents.core.obs_norm`) and by RND's observation and
intrinsic-return normalisation (:mod:`agents.rnd_ppo.normalize`). Its ``state_dict`` holds
only tensors and plain numbers (it round-trips through ``torch.load(weights_only=True)``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

ArrayLike = np.ndarray | torch.Tensor


def numpy64(x: ArrayLike) -> np.ndarray:
    """``x`` (numpy or torch, any device) as a float64 numpy array."""
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu().numpy()
    return np.asarray(x, dtype=np.float64)


def array_from_state(state: Mapping[str, Any], key: str, shape: tuple[int, ...]) -> np.ndarray:
    """``state[key]`` as float64 of exactly ``shape``; a missing key or another shape is a
    ValueError naming the key (a saved state is read as hostile input)."""
    if key not in state:
        raise ValueError(f"expected key {key!r} in the normalisation state, got {sorted(state)}")
    value = state[key]
    arr = numpy64(value) if isinstance(value, (torch.Tensor, np.ndarray)) else np.asarray(value)
    if arr.shape != shape:
        raise ValueError(f"expected {key} of shape {shape}, got {arr.shape}")
    return arr.astype(np.float64)


class RunningMeanStd:
    """Running mean/variance over the leading axis of batches ``[N, *shape]`` (float64).

    Before any data: mean 0, var 1, count 0 (normalising is then the identity)."""

    def __init__(self, shape: tuple[int, ...] = ()):
        self.shape = tuple(shape)
        self.mean = np.zeros(self.shape, np.float64)
        self.var = np.ones(self.shape, np.float64)
        self.count = 0.0

    @property
    def std(self) -> np.ndarray:
        return np.sqrt(self.var)

    def update(self, x: ArrayLike) -> None:
        """Add a batch ``[N, *shape]`` (numpy or torch; N may be 0)."""
        arr = numpy64(x)
        if arr.shape[1:] != self.shape:
            raise ValueError(f"expected a batch of shape [N, *{self.shape}], got {arr.shape}")
        if len(arr) == 0:
            return
        self.update_from_moments(arr.mean(axis=0), arr.var(axis=0), len(arr))

    def update_from_moments(
        self, batch_mean: ArrayLike, batch_var: ArrayLike, batch_count: float
    ) -> None:
        """Merge a batch's mean, population variance and size (Chan et al.)."""
        if batch_count <= 0:
            return
        b_mean, b_var = numpy64(batch_mean), numpy64(batch_var)
        if self.count == 0:
            self.mean, self.var, self.count = np.array(b_mean), np.array(b_var), float(batch_count)
            return
        total = self.count + batch_count
        delta = b_mean - self.mean
        m2 = self.var * self.count + b_var * batch_count
        m2 = m2 + delta**2 * self.count * batch_count / total
        self.mean = np.asarray(self.mean + delta * batch_count / total, np.float64)
        self.var = np.asarray(m2 / total, np.float64)
        self.count = float(total)

    def state_dict(self) -> dict[str, Any]:
        return {
            "mean": torch.from_numpy(self.mean.copy()),
            "var": torch.from_numpy(self.var.copy()),
            "count": float(self.count),
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.mean = array_from_state(state, "mean", self.shape)
        self.var = array_from_state(state, "var", self.shape)
        self.count = float(state.get("count", 0.0))
        if self.count < 0 or not np.all(self.var >= 0):
            raise ValueError(
                f"expected count >= 0 and var >= 0 in the normalisation state, "
                f"got count {self.count}, min var {self.var.min() if self.var.size else 0}"
            )


__all__ = ["ArrayLike", "RunningMeanStd", "array_from_state", "numpy64"]

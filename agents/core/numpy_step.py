"""One acting step of a small recurrent network in numpy, for CPU actors.

An actor steps its network one observation at a time (``[1, n, ...]``). For the small
networks of vector observations (CartPole's 4 numbers through a 64-wide MLP, an LSTM and
two 64-wide heads), one torch step costs ~100+ microseconds, almost all of it per-op
dispatch and module calls; the same arithmetic as ~30 numpy calls costs a fifth of that.
:class:`NumpyStep` is that arithmetic, read from the network's own parameters: its arrays
are numpy *views* of the torch tensors, so a ``load_state_dict`` (an in-place copy) is
seen at once and there is nothing to keep in sync.

It covers vector and discrete leaves, the LSTM core or the feed-forward one, and every head
kind. A network it does not cover (frames, grids, a mirror) builds none and keeps stepping
in torch. Outputs equal torch's within float32 rounding (``tests/agents/test_numpy_step.py``).

Batches large enough that OpenBLAS would split a product over threads (which spin and
collapse on a loaded machine) are left to torch as well: see :data:`MAX_GATE_PRODUCT`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

MAX_GATE_PRODUCT = 200_000
"""Largest ``rows * inputs * outputs`` of one step's biggest product run in numpy; OpenBLAS
goes multi-threaded above ~262,144 (its default ``GEMM_MULTITHREAD_THRESHOLD``)."""

Layer = tuple[np.ndarray, np.ndarray]
"""A Linear layer's ``(weight [out, in], bias [out])`` views."""


def linear_layers(seq: nn.Module) -> list[Layer] | None:
    """The Linear layers of a ``Linear, ReLU, Linear[, ReLU]`` stack, None for any other."""
    layers: list[Layer] = []
    mods = list(seq.children()) if isinstance(seq, nn.Sequential) else [seq]
    for i, m in enumerate(mods):
        if isinstance(m, nn.Linear) and m.bias is not None and i % 2 == 0:
            layers.append((_view(m.weight), _view(m.bias)))
        elif not (isinstance(m, nn.ReLU) and i % 2 == 1):
            return None
    return layers


def _view(t: torch.Tensor) -> np.ndarray:
    return t.detach().numpy()


def mlp(x: np.ndarray, layers: Sequence[Layer], relu_last: bool) -> np.ndarray:
    """``x`` through the layers, ReLU between them (and after the last if ``relu_last``)."""
    for i, (w, b) in enumerate(layers):
        x = x @ w.T
        x += b
        if relu_last or i < len(layers) - 1:
            np.maximum(x, 0.0, out=x)
    return x


@dataclass
class VectorLeaf:
    key: str
    layers: list[Layer]
    center: np.ndarray | None
    inv_half: np.ndarray | None

    def accepts(self, x: np.ndarray) -> bool:
        return x.dtype == np.float32  # torch refuses other floats against float32 weights

    def __call__(self, x: np.ndarray) -> np.ndarray:
        if self.center is not None:
            x = (x - self.center) * self.inv_half
        return mlp(x, self.layers, relu_last=True)


@dataclass
class DiscreteLeaf:
    key: str
    n: int

    def accepts(self, x: np.ndarray) -> bool:
        return x.dtype.kind in "iu"

    def __call__(self, x: np.ndarray) -> np.ndarray:
        out = np.zeros((len(x), self.n), np.float32)
        out[np.arange(len(x)), np.minimum(np.maximum(x.astype(np.int64), 0), self.n - 1)] = 1.0
        return out


HeadFn = Callable[[np.ndarray], np.ndarray]


def dueling_head(value: list[Layer], advantage: list[Layer]) -> HeadFn:
    def run(x: np.ndarray) -> np.ndarray:
        adv = mlp(x, advantage, relu_last=False)
        mean = adv.sum(axis=-1, keepdims=True)
        mean /= adv.shape[-1]
        return mlp(x, value, relu_last=False) + adv - mean

    return run


def plain_head(layers: list[Layer], shape: tuple[int, ...]) -> HeadFn:
    """Logits, a value (``shape`` ``()``) or distributional logits (``(actions, atoms)``)."""

    def run(x: np.ndarray) -> np.ndarray:
        return mlp(x, layers, relu_last=False).reshape(len(x), *shape)

    return run


@dataclass
class NumpyStep:
    """One step ``[n, ...] -> heads [n, ...], (h, c)`` of a network's arithmetic in numpy."""

    leaves: list[VectorLeaf | DiscreteLeaf]
    lstm: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None
    """``(w_ih, w_hh, b_ih, b_hh)`` of the LSTM core; None: the feed-forward core."""
    feed_forward: list[Layer] | None
    num_actions: int
    heads: dict[str, HeadFn]
    width: int
    """The widest product's ``inputs * outputs`` (per row)."""
    _table: np.ndarray | None = None
    _scale: np.ndarray | None = None

    def fits(self, rows: int) -> bool:
        return rows * self.width <= MAX_GATE_PRODUCT

    def accepts(self, obs: dict[str, np.ndarray]) -> bool:
        """Observations of the dtypes torch's forward takes (others go to torch)."""
        return all(leaf.accepts(obs[leaf.key]) for leaf in self.leaves)

    def __call__(
        self,
        obs: dict[str, np.ndarray],
        prev_action: np.ndarray,
        prev_reward: np.ndarray,
        h: np.ndarray,
        c: np.ndarray,
    ) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
        parts = [leaf(obs[leaf.key]) for leaf in self.leaves]
        if self.lstm is None:
            features = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=-1)
            out = mlp(features, self.feed_forward or [], relu_last=True)
            return {k: f(out) for k, f in self.heads.items()}, h, c
        w_ih, w_hh, b_ih, b_hh = self.lstm
        # the core's input as torch builds it: features, one-hot previous action (row 0 of
        # the table, all zeros, for -1: none), previous reward
        onehot = self.action_table[prev_action + 1]
        x = np.concatenate([*parts, onehot, prev_reward.reshape(-1, 1)], axis=1, dtype=np.float32)
        gates = x @ w_ih.T
        gates += b_ih
        gates += h @ w_hh.T
        gates += b_hh
        size = h.shape[1]
        # torch's gate order: input, forget, cell, output; sigmoid(x) = (1 + tanh(x / 2)) / 2
        t = np.tanh(gates * self.gate_scale)
        s = t * 0.5
        s += 0.5
        c1 = s[:, size : 2 * size] * c
        c1 += s[:, :size] * t[:, 2 * size : 3 * size]
        h1 = s[:, 3 * size :] * np.tanh(c1)
        return {k: fn(h1) for k, fn in self.heads.items()}, h1, c1

    @property
    def action_table(self) -> np.ndarray:
        """``[A + 1, A]``: row ``a + 1`` is the one-hot of action ``a``, row 0 all zeros."""
        if self._table is None:
            self._table = np.eye(self.num_actions + 1, dtype=np.float32)[:, 1:].copy()
        return self._table

    @property
    def gate_scale(self) -> np.ndarray:
        """``[4H]``: 1/2 on the sigmoid gates, 1 on the cell gate (tanh)."""
        if self._scale is None:
            size = self.lstm[1].shape[1]
            self._scale = np.full(4 * size, 0.5, np.float32)
            self._scale[2 * size : 3 * size] = 1.0
        return self._scale


class Watch:
    """Whether tensors still live where they did when a step was built on views of them
    (``share_memory_``, ``.to(...)`` and ``.data =`` move them; ``load_state_dict`` and an
    optimiser step write in place and keep them)."""

    def __init__(self, tensors: Sequence[torch.Tensor]):
        self.tensors = list(tensors)
        self.pointers = [t.data_ptr() for t in self.tensors]

    def current(self) -> bool:
        return [t.data_ptr() for t in self.tensors] == self.pointers


def leaf_step(key: str, encoder: nn.Module, kind: str) -> VectorLeaf | DiscreteLeaf | None:
    """The numpy form of one observation leaf's encoder (None: not covered)."""
    if kind == "discrete":
        return DiscreteLeaf(key, int(encoder.n))
    if kind != "vector":
        return None
    layers = linear_layers(encoder.net)
    if layers is None:
        return None
    scaled = bool(encoder.scaled)
    return VectorLeaf(
        key,
        layers,
        _view(encoder.center) if scaled else None,
        _view(encoder.inv_half) if scaled else None,
    )


__all__ = [
    "MAX_GATE_PRODUCT",
    "DiscreteLeaf",
    "NumpyStep",
    "VectorLeaf",
    "Watch",
    "dueling_head",
    "leaf_step",
    "linear_layers",
    "mlp",
    "plain_head",
]

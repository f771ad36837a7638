"""Observation encoders: one per leaf of the observation spec (:mod:`agents.core.preprocess`),
concatenated by :class:`ObservationEncoder` into the features the recurrent core reads.

=========== ===================================================================
leaf kind   encoder
=========== ===================================================================
``frame``   :class:`FrameEncoder`, the Nature-DQN CNN on 84x84 gray frames
``grid``    MiniGrid's symbolic view: :class:`GridEncoder` (conv) or
            :class:`GridMLPEncoder` (``--grid-encoder mlp``)
``vector``  :class:`VectorEncoder`, a two-layer MLP
``discrete`` :class:`DiscreteEncoder`, a one-hot
=========== ===================================================================
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from agents.core.preprocess import Leaf, ObsSpec

GRID_VALUES = (16, 8, 4)
"""One-hot sizes of MiniGrid's (object, colour, state) channels (11, 6 and 3 used)."""


def run_stack(stack: nn.Sequential, x: torch.Tensor) -> torch.Tensor:
    """``stack(x)`` with its Linear and ReLU layers called as functions: the same ops without
    a module call per layer (a tenth of a small learner update); other layers as modules."""
    for layer in stack:
        if type(layer) is nn.Linear:
            x = F.linear(x, layer.weight, layer.bias)
        elif type(layer) is nn.ReLU:
            x = F.relu(x)
        else:
            x = layer(x)
    return x


def mlp(n_in: int, hidden: int) -> nn.Module:
    return nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())


class FrameEncoder(nn.Module):
    """Nature-DQN CNN for ``[N, 84, 84]`` uint8 gray frames, or stacks ``[N, k, H, W]``."""

    def __init__(self, hidden: int, shape: tuple[int, ...] = (84, 84)):
        super().__init__()
        self.stacked = len(shape) == 3
        channels = shape[0] if self.stacked else 1
        convs = [
            nn.Conv2d(channels, 32, 8, stride=4),
            nn.ReLU(),
            nn.Conv2d(32, 64, 4, stride=2),
            nn.ReLU(),
            nn.Conv2d(64, 64, 3, stride=1),
            nn.ReLU(),
            nn.Flatten(),
        ]
        with torch.no_grad():
            width = nn.Sequential(*convs)(torch.zeros(1, channels, *shape[-2:])).shape[1]
        self.net = nn.Sequential(*convs, nn.Linear(width, hidden), nn.ReLU())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.float() if self.stacked else x.float().unsqueeze(1)
        return self.net(x / 255.0)


def grid_sizes(channels: int) -> tuple[int, ...]:
    """One-hot size of each channel of a MiniGrid view (16 each past the known three)."""
    return GRID_VALUES[:channels] if channels <= len(GRID_VALUES) else (16,) * channels


def grid_one_hot(x: torch.Tensor, sizes: tuple[int, ...]) -> torch.Tensor:
    """``[N, H, W, C]`` integer view -> ``[N, H, W, sum(sizes)]``: each channel one-hot in
    its own slice (values clipped to the channel's size)."""
    size = torch.tensor(sizes, device=x.device)
    offsets = torch.cumsum(size, 0) - size
    idx = torch.minimum(x.long().clamp(min=0), size - 1) + offsets
    onehot = torch.zeros(*x.shape[:3], sum(sizes), device=x.device)
    return onehot.scatter_(-1, idx, 1.0)


class GridEncoder(nn.Module):
    """MiniGrid symbolic view ``[N, H, W, 3]``: one-hot per channel, then a small CNN."""

    def __init__(self, leaf: Leaf, hidden: int):
        super().__init__()
        h, w, c = leaf.shape
        self.sizes = grid_sizes(c)
        self.conv = nn.Sequential(
            nn.Conv2d(sum(self.sizes), 16, 2),
            nn.ReLU(),
            nn.Conv2d(16, 32, 2),
            nn.ReLU(),
            nn.Flatten(),
        )
        self.out = nn.Sequential(nn.Linear(32 * max(h - 2, 1) * max(w - 2, 1), hidden), nn.ReLU())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        onehot = grid_one_hot(x, self.sizes)
        return self.out(self.conv(onehot.permute(0, 3, 1, 2)))


class GridMLPEncoder(nn.Module):
    """MiniGrid symbolic view ``[N, H, W, 3]``: one-hot per channel, flattened, then a
    two-layer MLP. No spatial weight sharing (the egocentric 7x7 view is small and always
    aligned with the agent); on CPU its update costs a fifth of the conv encoder's."""

    def __init__(self, leaf: Leaf, hidden: int):
        super().__init__()
        h, w, c = leaf.shape
        self.sizes = grid_sizes(c)
        self.net = mlp(h * w * sum(self.sizes), hidden)
        # each cell's channels as columns of the flattened one-hot (the first layer's input
        # is a 1 in h * w * c of its h * w * sum(sizes) columns); numpy, as the networks'
        # other constants, so that a build on the meta device runs no torch reference op
        size = np.array(self.sizes, dtype=np.int64)
        cell = np.arange(h * w, dtype=np.int64).reshape(h, w, 1) * int(size.sum())
        column = cell + np.cumsum(size) - size
        self.register_buffer("_size", torch.from_numpy(size), persistent=False)
        self.register_buffer("_column", torch.from_numpy(column), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        first = self.net[0]
        # the 1s of the flattened one-hot: each cell's values, clipped to their channel
        column = torch.minimum(x.long().clamp(min=0), self._size - 1) + self._column
        column = column.reshape(x.shape[0], -1)
        if torch.is_grad_enabled() and first.weight.requires_grad:
            onehot = torch.zeros(x.shape[0], first.in_features, device=x.device)
            return run_stack(self.net, onehot.scatter_(1, column, 1.0))
        # without a graph (acting, target values, the burn-in) the first layer sums the
        # weight columns of the cells' values instead of multiplying a one-hot that is
        # almost all zeros: a fifth of the time on CPU, the same sum up to rounding
        # (the graph's backward is not cheaper this way, so a pass that learns keeps the one-hot)
        y = F.embedding_bag(column, first.weight.t().contiguous(), mode="sum") + first.bias
        return run_stack(self.net[1:], y)


GRID_ENCODERS = {"conv": GridEncoder, "mlp": GridMLPEncoder}
"""``--grid-encoder``: how a MiniGrid view is encoded."""


class VectorEncoder(nn.Module):
    """A vector through a two-layer MLP, its bounded dimensions first mapped to [-1, 1]
    (the leaf's ``center`` and ``half``; none kept: as they are)."""

    def __init__(self, leaf: Leaf, hidden: int):
        super().__init__()
        n = leaf.shape[0]
        center = leaf.center or (0.0,) * n
        half = leaf.half or (1.0,) * n
        self.register_buffer("center", torch.tensor(center, dtype=torch.float32), persistent=False)
        # float32 division in numpy: the same numbers as torch's reciprocal, but on the meta
        # device (the footprint check) torch's goes through its reference ops, which import
        # torch._dynamo (seconds of start-up)
        inv_half = np.float32(1.0) / np.asarray(half, dtype=np.float32)
        self.register_buffer("inv_half", torch.from_numpy(inv_half), persistent=False)
        self.scaled = bool(leaf.center)
        self.net = mlp(n, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return run_stack(self.net, (x - self.center) * self.inv_half if self.scaled else x)


class DiscreteEncoder(nn.Module):
    def __init__(self, n: int):
        super().__init__()
        self.n = n

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.one_hot(x.long().clamp(0, self.n - 1), self.n).float()


def _encoder(leaf: Leaf, hidden: int, grid: str = "conv") -> tuple[nn.Module, int]:
    if leaf.kind == "frame":
        return FrameEncoder(hidden, leaf.shape), hidden
    if leaf.kind == "grid":
        return GRID_ENCODERS[grid](leaf, hidden), hidden
    if leaf.kind == "discrete":
        return DiscreteEncoder(leaf.n), leaf.n
    return VectorEncoder(leaf, hidden), hidden


class ObservationEncoder(nn.Module):
    """One encoder per leaf, concatenated (Dict spaces combined)."""

    def __init__(self, spec: ObsSpec, hidden: int, grid: str = "conv"):
        super().__init__()
        parts = {name: _encoder(leaf, hidden, grid) for name, leaf in spec.items()}
        self.encoders = nn.ModuleDict({k: m for k, (m, _) in parts.items()})
        self.out_dim = sum(d for _, d in parts.values())

    def forward(self, obs: dict[str, torch.Tensor]) -> torch.Tensor:
        """``obs[leaf]`` is ``[N, ...]``; returns ``[N, out_dim]``."""
        return torch.cat([enc(obs[k]) for k, enc in self.encoders.items()], dim=-1)


__all__ = [
    "GRID_ENCODERS",
    "GRID_VALUES",
    "DiscreteEncoder",
    "FrameEncoder",
    "GridEncoder",
    "GridMLPEncoder",
    "ObservationEncoder",
    "VectorEncoder",
    "grid_one_hot",
    "grid_sizes",
    "mlp",
    "run_stack",
]

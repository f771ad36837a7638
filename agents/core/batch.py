"""What a loss sees: a batch on the learner's device and the learner's networks, and what it
returns. Both the learner and every loss import this module (and never each other), so a
new loss is written against these types alone.

Tensors are time-major: ``[T, B, ...]``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NamedTuple, Protocol

import numpy as np
import torch

from agents.core.networks import LSTMState
from agents.core.sequences import SequenceBatch


class SourceSizes(NamedTuple):
    """What each data source held when a batch was drawn, ``[S]`` each, indexed as
    ``Sample.names``: for a loss that weights its elements as if every source were one
    prioritized replay (DQfD)."""

    size: np.ndarray
    """Sequences held."""
    total: np.ndarray
    """float64 sum of the held sequences' priorities."""
    beta: np.ndarray
    """float64 importance-weight exponent the source's elements were weighted with."""


class TorchBatch(NamedTuple):
    """A sampled batch on the learner's device, time-major ``[T, B, ...]``."""

    obs: dict[str, torch.Tensor]
    prev_action: torch.Tensor
    prev_reward: torch.Tensor
    action: torch.Tensor
    reward: torch.Tensor
    terminal: torch.Tensor
    mask: torch.Tensor
    state: LSTMState
    weight: torch.Tensor
    """``[B]`` importance weights (ones where sampling was uniform)."""
    source: torch.Tensor
    """``[B]`` index of the data source each element came from (see ``Sample.names``)."""
    is_demo: torch.Tensor
    """``[B]`` bool, the element came from a source flagged ``demo``."""
    extras: dict[str, torch.Tensor]
    """``[T, B, ...]`` per-step policy extras (mu, log-probabilities, values, ...)."""
    held: SourceSizes | None = None
    """What each source held when the batch was drawn (None: not drawn from sources)."""


class Sample(NamedTuple):
    """A batch as drawn from the data sources (numpy, batch-major ``[B, L, ...]``)."""

    batch: SequenceBatch
    weight: np.ndarray
    """``[B]`` importance weights normalised by the batch maximum."""
    source: np.ndarray
    """``[B]`` int, which source each element came from (index into ``names``)."""
    index: np.ndarray
    """``[B]`` slot of each element in its source."""
    is_demo: np.ndarray
    """``[B]`` bool, the element's source holds demonstrations."""
    names: tuple[str, ...] = ()
    """Source names, in index order."""
    held: SourceSizes | None = None
    """What each source held when the batch was drawn (None: not drawn from sources)."""


def uniform_sample(batch: SequenceBatch, index: np.ndarray | None = None) -> Sample:
    """A batch of one non-demo source with unit weights (offline and on-policy batches)."""
    n = len(batch)
    idx = np.arange(n) if index is None else np.asarray(index)
    zeros = np.zeros(n, np.int64)
    return Sample(batch, np.ones(n, np.float32), zeros, idx, np.zeros(n, bool), ("batch",))


def to_torch(sample: Sample, device: torch.device) -> TorchBatch:
    b = sample.batch

    def tm(x: np.ndarray) -> torch.Tensor:  # [B, L, ...] -> [L, B, ...]
        return torch.from_numpy(np.ascontiguousarray(np.swapaxes(x, 0, 1))).to(device)

    return TorchBatch(
        obs={k: tm(v) for k, v in b.obs.items()},
        prev_action=tm(b.prev_action),
        prev_reward=tm(b.prev_reward),
        action=tm(b.action),
        reward=tm(b.reward),
        terminal=tm(b.terminal),
        mask=tm(b.mask),
        state=LSTMState(torch.from_numpy(b.h0).to(device), torch.from_numpy(b.c0).to(device)),
        weight=torch.from_numpy(np.asarray(sample.weight, np.float32)).to(device),
        source=torch.from_numpy(np.asarray(sample.source)).to(device),
        is_demo=torch.from_numpy(np.asarray(sample.is_demo, bool)).to(device),
        extras={k: tm(v) for k, v in b.extras.items()},
        held=sample.held,
    )


class LossOutput(NamedTuple):
    loss: torch.Tensor
    """Scalar to minimise."""
    td_abs: torch.Tensor | None = None
    """``[T, B]`` |TD error| per step for replay priorities (None: priorities unchanged)."""
    learn_mask: torch.Tensor | None = None
    """``[T, B]`` bool, the steps the loss used (with ``td_abs``)."""
    metrics: Mapping[str, float] = {}


class LearnerView(Protocol):
    """What a loss may read from the learner."""

    networks: dict[str, torch.nn.Module]
    """The trained networks by name (``main`` first)."""
    targets: dict[str, torch.nn.Module]
    """Target copies by the name of the network they follow."""
    device: torch.device

    @property
    def network(self) -> torch.nn.Module:
        """``networks["main"]``."""

    @property
    def target(self) -> torch.nn.Module:
        """``targets["main"]``."""


Loss = Callable[[LearnerView, TorchBatch], LossOutput]
"""A loss: the learner's networks and a batch in, :class:`LossOutput` out."""


__all__ = [
    "LearnerView",
    "Loss",
    "LossOutput",
    "Sample",
    "SourceSizes",
    "TorchBatch",
    "to_torch",
    "uniform_sample",
]

"""Batches mixed from several prioritized buffers (agent replay, demo replay, episode memory).

Each batch element is drawn from an extra source with that source's probability (its
ratio), otherwise from the main buffer. Priorities computed by the learner are written back
to whichever buffer each element came from.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from agents.core.replay import PrioritizedSequenceReplay, sequence_priority
from agents.core.sequences import SequenceBatch, concat_batches


@dataclass(frozen=True)
class LinearSchedule:
    """``initial`` annealed linearly to ``final`` over ``steps`` (then held); fixed when
    ``final`` is None or ``steps`` <= 0."""

    initial: float
    final: float | None = None
    steps: int = 0

    def __call__(self, t: float) -> float:
        if self.final is None or self.steps <= 0:
            return self.initial
        frac = min(max(t / self.steps, 0.0), 1.0)
        return self.initial + frac * (self.final - self.initial)


@dataclass
class MixSource:
    """An extra buffer mixed into batches with probability ``ratio(step)`` per element."""

    buffer: PrioritizedSequenceReplay
    ratio: Callable[[float], float]
    min_size: int = 1
    """The source is skipped (ratio 0) while it holds fewer items than this."""


class MixedSample(NamedTuple):
    batch: SequenceBatch
    """``[B, L, ...]`` the batch, grouped by source in ``sources`` order."""
    weight: np.ndarray
    """``[B]`` importance weights normalised by the batch maximum."""
    source: np.ndarray
    """``[B]`` int, which buffer each element came from (0 = main)."""
    index: np.ndarray
    """``[B]`` slot of each element in its buffer."""


class ReplayMix:
    """Batch source: a main buffer plus extra sources mixed per element."""

    def __init__(
        self,
        main: PrioritizedSequenceReplay,
        extras: list[MixSource] | None = None,
        seed: int | None = None,
    ):
        self.main = main
        self.extras = list(extras or [])
        self.rng = np.random.default_rng(seed)

    @property
    def buffers(self) -> list[PrioritizedSequenceReplay]:
        return [self.main, *(s.buffer for s in self.extras)]

    def ratios(self, step: float) -> list[float]:
        """Per-element probability of each extra source at ``step`` (0 while too small)."""
        out = []
        for s in self.extras:
            out.append(float(s.ratio(step)) if len(s.buffer) >= s.min_size else 0.0)
        if sum(out) > 1.0 + 1e-9:
            raise ValueError(f"expected the mixing ratios to sum to at most 1, got {out}")
        return out

    def ready(self, min_main: int) -> bool:
        """Learning starts once the main buffer holds ``min_main`` sequences."""
        return len(self.main) >= max(min_main, 1)

    def sample(self, batch_size: int, step: float) -> MixedSample:
        ratios = self.ratios(step)
        probs = np.array([max(0.0, 1.0 - sum(ratios)), *ratios])
        if len(self.main) == 0:
            probs[0] = 0.0
        if probs.sum() <= 0:
            raise ValueError("expected at least one non-empty buffer to sample from, got none")
        probs = probs / probs.sum()
        counts = self.rng.multinomial(batch_size, probs)
        parts, weights, sources, indices = [], [], [], []
        for i, (buf, n) in enumerate(zip(self.buffers, counts)):
            if n == 0:
                continue
            s = buf.sample(int(n))
            parts.append(s.batch)
            weights.append(s.weight)
            sources.append(np.full(n, i))
            indices.append(s.index)
        w = np.concatenate(weights)
        return MixedSample(
            batch=concat_batches(parts),
            weight=(w / w.max()).astype(np.float32),
            source=np.concatenate(sources),
            index=np.concatenate(indices),
        )

    def update_priorities(self, sample: MixedSample, td_abs: np.ndarray, mask: np.ndarray) -> None:
        """Write ``eta``-mixed priorities (``td_abs``, ``mask``: ``[B, T]``) back to the buffer
        each element came from."""
        for i, buf in enumerate(self.buffers):
            sel = sample.source == i
            if sel.any():
                prio = sequence_priority(td_abs[sel], mask[sel], buf.eta)
                buf.update_priorities(sample.index[sel], prio)


__all__ = ["LinearSchedule", "MixSource", "MixedSample", "ReplayMix"]

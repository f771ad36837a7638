"""Batches mixed from named data sources (agent replay, demo replay, episode memory).

Each source is a prioritized buffer with a name and an explicit ``demo`` flag (no source is
"the demos" by position: a loss reads ``batch.is_demo``). Each batch element is drawn from
an extra source with that source's probability (its ratio), otherwise from the main source.
Priorities computed by the learner are written back to whichever buffer each element came
from.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from agents.core.batch import Sample, SourceSizes
from agents.core.replay import PrioritizedSequenceReplay, sequence_priority
from agents.core.sequences import concat_batches


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
class DataSource:
    """A named buffer batches are drawn from."""

    name: str
    buffer: PrioritizedSequenceReplay
    ratio: Callable[[float], float] = lambda _t: 0.0
    """Per-element probability at a step (extra sources; the main source gets the rest)."""
    demo: bool = False
    """The buffer holds demonstrations (losses see it as ``batch.is_demo``)."""
    min_size: int = 1
    """The source is skipped (ratio 0) while it holds fewer items than this."""


class ReplayMix:
    """Batch source: a main buffer plus extra sources mixed per element."""

    def __init__(
        self,
        main: DataSource | PrioritizedSequenceReplay,
        extras: list[DataSource] | None = None,
        seed: int | None = None,
        beta: Callable[[float], float] | None = None,
    ):
        if isinstance(main, PrioritizedSequenceReplay):
            main = DataSource(main.name, main)
        self.main_source = main
        self.main = main.buffer
        self.extras = list(extras or [])
        self.rng = np.random.default_rng(seed)
        self.beta = beta
        """Importance-weight exponent at a step for every buffer (none: each buffer's own)."""
        names = [s.name for s in self.sources]
        if len(set(names)) != len(names):
            raise ValueError(f"expected distinct source names, got {names}")

    @property
    def sources(self) -> list[DataSource]:
        return [self.main_source, *self.extras]

    @property
    def buffers(self) -> list[PrioritizedSequenceReplay]:
        return [s.buffer for s in self.sources]

    def source(self, name: str) -> DataSource:
        for s in self.sources:
            if s.name == name:
                return s
        raise KeyError(f"expected a source in {[s.name for s in self.sources]}, got {name!r}")

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

    def sample(self, batch_size: int, step: float) -> Sample:
        ratios = self.ratios(step)
        probs = np.array([max(0.0, 1.0 - sum(ratios)), *ratios])
        if len(self.main) == 0:
            probs[0] = 0.0
        if probs.sum() <= 0:
            raise ValueError("expected at least one non-empty buffer to sample from, got none")
        probs = probs / probs.sum()
        counts = self.rng.multinomial(batch_size, probs)
        beta = None if self.beta is None else float(self.beta(step))
        parts, weights, sources, indices = [], [], [], []
        for i, (buf, n) in enumerate(zip(self.buffers, counts)):
            if n == 0:
                continue
            s = buf.sample(int(n), beta)
            parts.append(s.batch)
            weights.append(s.weight)
            sources.append(np.full(n, i))
            indices.append(s.index)
        w = np.concatenate(weights)
        source = np.concatenate(sources)
        demo = np.array([s.demo for s in self.sources])
        betas = [b.beta if beta is None else beta for b in self.buffers]
        held = SourceSizes(
            np.array([len(b) for b in self.buffers], np.int64),
            np.array([b.tree.total for b in self.buffers], np.float64),
            np.array(betas, np.float64),
        )
        return Sample(
            batch=parts[0] if len(parts) == 1 else concat_batches(parts),  # take() copied it
            weight=(w / w.max()).astype(np.float32),
            source=source,
            index=np.concatenate(indices),
            is_demo=demo[source],
            names=tuple(s.name for s in self.sources),
            held=held,
        )

    def update_priorities(self, sample: Sample, td_abs: np.ndarray, mask: np.ndarray) -> None:
        """Write ``eta``-mixed priorities (``td_abs``, ``mask``: ``[B, T]``) back to the buffer
        each element came from."""
        for i, buf in enumerate(self.buffers):
            sel = sample.source == i
            if sel.any():
                prio = sequence_priority(td_abs[sel], mask[sel], buf.eta)
                buf.update_priorities(sample.index[sel], prio)


__all__ = ["DataSource", "LinearSchedule", "ReplayMix"]

"""DQfD's pre-training phase: learner updates on demo batches only, before any env step."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from agents.core.learner import Learner
from agents.core.mixing import ReplayMix


def pretrain(
    learner: Learner,
    mix: ReplayMix,
    updates: int,
    batch_size: int,
    log: Callable[[dict[str, float]], None],
    log_every: int = 200,
    progress: bool = False,
) -> int:
    """Run ``updates`` learner updates on batches from ``mix`` (whose main buffer is still
    empty, so every element comes from the demo replay), writing priorities back.

    ``log`` receives the mean metrics of every ``log_every`` updates (and of the last
    partial window). Takes no env: nothing here can step one. Returns the updates done.
    """
    from tqdm import tqdm

    stats: dict[str, list[float]] = {}

    def flush() -> None:
        if stats:
            log({k: float(np.mean(v)) for k, v in stats.items()})
            stats.clear()

    with tqdm(total=updates, desc="pre-training on demos", unit="upd", disable=not progress) as bar:
        for i in range(updates):
            sample = mix.sample(batch_size, 0)
            metrics, td, mask = learner.update(sample)
            mix.update_priorities(sample, td, mask)
            for k, v in metrics.items():
                stats.setdefault(k, []).append(v)
            bar.update(1)
            if (i + 1) % log_every == 0:
                bar.set_postfix(loss=f"{np.mean(stats['loss']):.3f}")
                flush()
        flush()
    return updates


__all__ = ["pretrain"]

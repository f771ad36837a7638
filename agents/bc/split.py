"""Validation split of demo episodes and early stopping on the validation loss."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from agents.core.demos import DemoSet


class DemoSplit(NamedTuple):
    train: DemoSet
    val: DemoSet
    """Empty (no paths) when there are too few episodes to hold one out."""


def split_episodes(demos: DemoSet, val_fraction: float, seed: int) -> DemoSplit:
    """Hold out whole episodes: ``round(val_fraction * n)`` of them, at least one and at
    most ``n - 1`` when ``val_fraction > 0`` and ``n >= 2``; none for a single episode.
    No step of a validation episode is ever trained on."""
    n = len(demos.episodes)
    n_val = 0
    if val_fraction > 0 and n >= 2:
        n_val = min(max(1, round(val_fraction * n)), n - 1)
    order = np.random.default_rng(seed).permutation(n)
    val_idx, train_idx = sorted(order[:n_val]), sorted(order[n_val:])
    return DemoSplit(demos.subset(train_idx), demos.subset(val_idx))


class EarlyStopping:
    """Tracks the best validation loss; ``should_stop`` after ``patience`` validations in a
    row that did not improve it by more than ``min_delta`` (``patience`` 0: never)."""

    def __init__(self, patience: int, min_delta: float = 0.0):
        self.patience = patience
        self.min_delta = min_delta
        self.best = math.inf
        self.bad_rounds = 0

    def update(self, loss: float) -> bool:
        """Record a validation loss; True when it is a new best."""
        if loss < self.best - self.min_delta:
            self.best = loss
            self.bad_rounds = 0
            return True
        self.bad_rounds += 1
        return False

    @property
    def should_stop(self) -> bool:
        return self.patience > 0 and self.bad_rounds >= self.patience


__all__ = ["DemoSplit", "EarlyStopping", "split_episodes"]

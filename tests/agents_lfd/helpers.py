"""Synthetic sequence batches and a tiny learner for loss tests."""

from __future__ import annotations

import numpy as np
import torch

from agents.core.learner import Learner, to_torch
from agents.core.mixing import MixedSample
from agents.core.networks import RecurrentQNetwork
from agents.core.preprocess import Leaf
from agents.core.sequences import SequenceBatch


def fake_sequences(b: int, length: int, num_actions: int = 3, seed: int = 0,
                   obs_dim: int = 4) -> SequenceBatch:  # fmt: skip
    """``b`` sequences of ``length`` steps; the last position is bootstrap-only."""
    rng = np.random.default_rng(seed)
    mask = np.ones((b, length), bool)
    mask[:, -1] = False
    return SequenceBatch(
        obs={"obs": rng.standard_normal((b, length, obs_dim)).astype(np.float32)},
        prev_action=rng.integers(0, num_actions, (b, length)),
        prev_reward=rng.standard_normal((b, length)).astype(np.float32),
        action=rng.integers(0, num_actions, (b, length)),
        reward=rng.standard_normal((b, length)).astype(np.float32),
        terminal=np.zeros((b, length), np.float32),
        mask=mask,
        h0=np.zeros((b, 8), np.float32),
        c0=np.zeros((b, 8), np.float32),
    )


def tiny_network(num_actions: int = 3, recurrent: bool = False) -> RecurrentQNetwork:
    torch.manual_seed(0)
    return RecurrentQNetwork({"obs": Leaf("vector", (4,))}, num_actions, 8, 8, recurrent)


def as_sample(batch: SequenceBatch, source: np.ndarray) -> MixedSample:
    n = len(batch)
    return MixedSample(batch, np.ones(n, np.float32), np.asarray(source), np.arange(n))


def torch_batch(batch: SequenceBatch, source: np.ndarray):
    return to_torch(as_sample(batch, source), torch.device("cpu"))


def make_learner(cfg, loss_fn, recurrent: bool = False) -> Learner:
    return Learner(tiny_network(recurrent=recurrent), cfg, torch.device("cpu"), loss_fn)

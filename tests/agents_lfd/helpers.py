"""Synthetic sequence batches and a tiny learner for loss tests."""

from __future__ import annotations

import numpy as np
import torch

from agents.core.batch import Sample, to_torch
from agents.core.learner import Learner, Optim
from agents.core.networks import HeadSpec, NetworkSpec, RecurrentNetwork, RecurrentQNetwork
from agents.core.preprocess import Leaf
from agents.core.sequences import SequenceBatch
from agents.core.targets import HardCopy


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


def tiny_policy_network(num_actions: int = 3, recurrent: bool = False) -> RecurrentNetwork:
    """BC's network: a ``logits`` head."""
    torch.manual_seed(0)
    spec = NetworkSpec({"obs": Leaf("vector", (4,))}, num_actions, 8, 8, recurrent,
                       {"logits": HeadSpec("logits")})  # fmt: skip
    return RecurrentNetwork(spec)


DEMO = 1
"""In these tests, source 1 is the demo replay (source 0 the agent replay)."""


def as_sample(batch: SequenceBatch, source: np.ndarray) -> Sample:
    n = len(batch)
    source = np.asarray(source)
    names = ("agent replay", "demo replay", "episode memory")
    return Sample(batch, np.ones(n, np.float32), source, np.arange(n), source == DEMO, names)


def torch_batch(batch: SequenceBatch, source: np.ndarray):
    return to_torch(as_sample(batch, source), torch.device("cpu"))


def make_learner(cfg, loss_fn, recurrent: bool = False) -> Learner:
    net = tiny_network(recurrent=recurrent)
    return Learner({"main": net}, torch.device("cpu"), loss_fn,
                   {"main": HardCopy(cfg.target_update_every)}, optim=Optim.of(cfg))  # fmt: skip

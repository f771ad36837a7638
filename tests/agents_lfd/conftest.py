"""Fixtures for the DQfD / BC / SQIL / compare tests: small recorded demo folders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("MPLBACKEND", "Agg")

TINY = dict(
    env="CartPole-v1",
    num_actors=2,
    hidden=16,
    lstm=16,
    batch_size=8,
    min_replay=8,
    env_steps_per_update=8.0,
    eval_episodes=1,
    checkpoint_every=10_000,
    progress=False,
    tensorboard=False,
    device="cpu",
)
"""A config small enough for a CartPole run of a few hundred steps in about a second."""


@pytest.fixture(scope="session")
def cartpole_demos(tmp_path_factory, record_demos) -> Path:
    """Two scripted CartPole episodes (500 steps each)."""
    return record_demos(tmp_path_factory.mktemp("lfd-demos"), "CartPole-v1", 2)


@pytest.fixture(scope="session")
def mountaincar_demo(tmp_path_factory, record_demos) -> Path:
    """One scripted MountainCar episode (about 120 steps) as a single file."""
    folder = record_demos(tmp_path_factory.mktemp("lfd-mc"), "MountainCar-v0", 1)
    return next(iter(sorted(folder.glob("*.h5"))))

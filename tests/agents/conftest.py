"""Fixtures for the agents tests: small recorded demo folders (no frames, fast)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("MPLBACKEND", "Agg")


def _record(root: Path, env: str, episodes: int, seed: int = 0) -> Path:
    from demostudio.cli.record_cmd import RecordConfig, record

    saved = record(
        RecordConfig(env=env, episodes=episodes, out=root, seed=seed, frames=False), progress=False
    )
    assert len(saved) == episodes
    return saved[0].parent


@pytest.fixture(scope="session")
def cartpole_demos(tmp_path_factory) -> Path:
    return _record(tmp_path_factory.mktemp("demos"), "CartPole-v1", 2)


@pytest.fixture(scope="session")
def mountaincar_demos(tmp_path_factory) -> Path:
    return _record(tmp_path_factory.mktemp("demos"), "MountainCar-v0", 1)

"""Fixtures for the agents tests: small recorded demo folders (no frames, fast)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture(scope="session")
def cartpole_demos(tmp_path_factory, record_demos) -> Path:
    return record_demos(tmp_path_factory.mktemp("demos"), "CartPole-v1", 2)


@pytest.fixture(scope="session")
def mountaincar_demos(tmp_path_factory, record_demos) -> Path:
    return record_demos(tmp_path_factory.mktemp("demos"), "MountainCar-v0", 1)

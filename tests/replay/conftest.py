"""Fixtures for the viewer and export tests: headless SDL and a few short MountainCar
episodes recorded with the scripted policy (recorded once, copied per test)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.gettempdir())
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import pygame
import pytest

from demostudio.cli.record_cmd import RecordConfig, record

SCREENSHOTS = Path(tempfile.gettempdir()) / "demostudio-replay-screenshots"


@pytest.fixture(scope="session")
def recorded(tmp_path_factory) -> list[Path]:
    """Three scripted MountainCar-v0 episodes (seeds 3, 4, 5), 600x400 frames."""
    root = tmp_path_factory.mktemp("recorded")
    cfg = RecordConfig(env="MountainCar-v0", episodes=3, out=root, seed=3, player="tester")
    return sorted(record(cfg, progress=False))


@pytest.fixture
def folder(tmp_path, recorded) -> Path:
    """A fresh copy of the recorded episodes (tests may tag, delete and tamper)."""
    target = tmp_path / "demos"
    target.mkdir()
    for p in recorded:
        shutil.copy2(p, target / p.name)
    return target


@pytest.fixture
def episodes(folder) -> list[Path]:
    return sorted(folder.glob("*.h5"))


@pytest.fixture
def viewer_factory(tmp_path):
    """Build viewers on a small window; closes them and pygame afterwards."""
    from demostudio.replay.viewer import Viewer

    made = []

    def make(paths, size=(1000, 640)):
        v = Viewer([Path(p) for p in paths], size=size, export_dir=tmp_path / "exports")
        made.append(v)
        return v

    yield make
    for v in made:
        v.close()
    # Not pygame.quit(): ui.theme caches fonts, which die with the font module.
    pygame.display.quit()

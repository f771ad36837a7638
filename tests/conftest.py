"""Test-wide settings: headless SDL, no audio, a quiet XDG runtime dir."""

from __future__ import annotations

import importlib.util
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.gettempdir())
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture(autouse=True)
def _user_folders(tmp_path_factory, monkeypatch):
    """Default recordings (XDG data home) and remembered settings (XDG config home) go to
    temporary folders, never the user's."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("data")))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))


@pytest.fixture(scope="session")
def record_demos() -> Callable[..., Path]:
    """``record_demos(root, env_id, episodes, seed=0)``: record scripted episodes (no frames)
    into ``root/<env folder>`` and return that folder."""
    from demostudio.cli.record_cmd import RecordConfig, record

    def run(root: Path, env: str, episodes: int, seed: int = 0) -> Path:
        cfg = RecordConfig(env=env, episodes=episodes, out=root, seed=seed, frames=False)
        saved = record(cfg, progress=False)
        assert len(saved) == episodes
        return saved[0].parent

    return run


@pytest.fixture(scope="session")
def benchmark_script() -> Callable[[str], object]:
    """``benchmark_script(name)``: the module ``benchmarks/<name>.py`` (the folder is no
    package), imported from its file."""

    def load(name: str) -> object:
        path = Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load

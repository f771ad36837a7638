"""Episodes for the interop tests, recorded once per session through the real recorder."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.gettempdir())

from demostudio.cli.record_cmd import RecordConfig, record
from demostudio.episode import RecordEpisodes, make_env


class _Infos(gym.Wrapper):
    """Adds infos that exercise the format: nested, text, a key missing at reset, a key that
    appears late, a vector."""

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        self.t = 0
        return obs, {**info, "phase": "start", "nested": {"a": 0}}

    def step(self, action):
        obs, reward, term, trunc, info = self.env.step(action)
        self.t += 1
        info = {
            **info,
            "phase": f"step {self.t}",
            "score": self.t * 0.5,
            "nested": {"a": self.t, "vec": np.array([self.t, -self.t], dtype=np.int64)},
        }
        if self.t >= 3:
            info["late"] = True
        return obs, reward, term, trunc, info


def _record_with_infos(folder: Path) -> Path:
    env = _Infos(make_env("MountainCar-v0", render_mode="rgb_array", max_episode_steps=40))
    rec = RecordEpisodes(env, folder, controller="keyboard", player="ada", fps=30.0)
    rec.reset(seed=123)
    rec.set_attrs(tags=["good", "infos"], notes="hand-made infos")
    done = False
    t = 0
    while not done:
        rec.set_keys(["right"] if t % 3 else ["left", "space"])
        _, _, term, trunc, _ = rec.step(2 if t % 3 else 0)
        done = term or trunc
        t += 1
    rec.close()
    return rec.saved[0]


@pytest.fixture(scope="session")
def demos(tmp_path_factory) -> dict[str, list[Path]]:
    """MountainCar (2 scripted + 1 keyboard with rich infos), DoorKey (2), all with frames."""
    root = tmp_path_factory.mktemp("demos")
    mc = record(RecordConfig("MountainCar-v0", episodes=2, out=root, seed=0), progress=False)
    mc.append(_record_with_infos(root / "MountainCar-v0"))
    dk = record(
        RecordConfig("MiniGrid-DoorKey-5x5-v0", episodes=2, out=root, seed=0), progress=False
    )
    return {"root": [root], "MountainCar-v0": mc, "MiniGrid-DoorKey-5x5-v0": dk}


@pytest.fixture(scope="session")
def atari(tmp_path_factory) -> Path:
    """A short Breakout episode (image observations, ALE infos, frames)."""
    folder = tmp_path_factory.mktemp("atari")
    env = make_env("ALE/Breakout-v5", render_mode="rgb_array", max_episode_steps=12)
    rec = RecordEpisodes(env, folder, controller="policy:random")
    rec.reset(seed=7)
    env.action_space.seed(7)
    done = False
    while not done:
        _, _, term, trunc, _ = rec.step(env.action_space.sample())
        done = term or trunc
    rec.close()
    return rec.saved[0]


@pytest.fixture
def minari_root(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "minari"
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(root))
    return root

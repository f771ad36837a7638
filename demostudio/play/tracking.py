"""A stand-in for :class:`~demostudio.episode.RecordEpisodes` when nothing is recorded (watching
an agent, practice play): the same counters and ``last_frame``, no files."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym


class TrackEpisodes(gym.Wrapper):
    """Renders each step into ``last_frame`` and counts steps and return; saves nothing."""

    def __init__(self, env: gym.Env):
        super().__init__(env)
        if env.render_mode != "rgb_array":
            raise ValueError(
                f"expected an env made with render_mode='rgb_array', got {env.render_mode!r}"
            )
        self.saved: list[Path] = []
        self.last_frame = None
        self.episode_steps = 0
        self.episode_return = 0.0
        self._active = False

    @property
    def recording(self) -> bool:
        return False

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        obs, info = self.env.reset(seed=seed, options=options)
        self.last_frame = self.env.render()
        self.episode_steps = 0
        self.episode_return = 0.0
        self._active = True
        return obs, info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.last_frame = self.env.render()
        self.episode_steps += 1
        self.episode_return += float(reward)
        if terminated or truncated:
            self._active = False
        return obs, reward, terminated, truncated, info

    def caller_busy(self) -> None:
        """Nothing is written, so nothing to defer (same interface as RecordEpisodes)."""

    def caller_idle(self) -> None:
        """Nothing is written, so nothing to defer (same interface as RecordEpisodes)."""

    def set_keys(self, keys: Sequence[str]) -> None:
        """Nothing is recorded, so the keys are dropped."""

    def set_attrs(self, **attrs: Any) -> None:
        """Nothing is recorded, so the attributes are dropped."""

    def end_episode(self, keep: bool = True) -> Path | None:
        self._active = False
        return None

    def discard_episode(self) -> None:
        self._active = False

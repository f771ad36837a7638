"""The episode being viewed: its open file plus the per-step arrays the timeline and the
overlay need (rewards, return so far, ends, who acted), read once when it is opened."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from demostudio.episode import EpisodeError, open_episode
from demostudio.episode.quality import person_steps
from demostudio.episode.reader import running_returns
from demostudio.export import stored_fps


class LoadedEpisode:
    def __init__(self, path: Path):
        self.path = Path(path)
        self.file = open_episode(self.path)
        try:
            scalars = self.file.scalars()
            self.rewards = scalars.rewards
            """[T] reward of step t."""
            self.terminations = scalars.terminations
            self.truncations = scalars.truncations
            self.returns = running_returns(self.rewards)
            """[T+1] return so far at frame i (the sum of rewards of steps < i; inf once
            finite rewards overflow float64, as the file's total_return then is)."""
            self.person = person_steps(self.file)
            """[T] bool: the steps a person took (the file's who-acted record)."""
        except BaseException:
            self.file.close()
            raise
        self.summary = self.file.summary
        self.fps = stored_fps(self.summary)
        self.has_frames = self.file.has_frames

    @property
    def mixed(self) -> bool:
        """Both a person and an agent acted (an episode with take-overs)."""
        return bool(self.person.any() and not self.person.all())

    @property
    def n_frames(self) -> int:
        return self.summary.length + 1

    def frame(self, i: int) -> np.ndarray:
        return self.file.frame(i)

    def action(self, t: int) -> Any:
        return self.file.action(t)

    def keys(self, t: int) -> list[str]:
        return self.file.keys_at(t)

    def info(self, i: int) -> dict[str, Any]:
        try:
            return self.file.info(i)
        except (EpisodeError, ValueError, KeyError, IndexError) as exc:
            return {"(info unreadable)": str(exc)}

    def close(self) -> None:
        self.file.close()

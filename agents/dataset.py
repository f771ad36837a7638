"""PyTorch datasets over episode folders, for users who bring their own training code.

Episodes are read only through :mod:`demostudio.episode`. Observations, actions and rewards
of every episode are loaded once; frames (optional, they are the bulk) are read on demand
from the files, which each DataLoader worker opens for itself.

* :class:`TransitionDataset`: one item per step ``t``: ``(obs_t, action_t, reward_t,
  obs_t+1, terminated_t, truncated_t)``, plus the two frames with ``frames=True``.
* :class:`SegmentDataset`: fixed-length windows of ``length`` steps, starting every
  ``period`` steps, never crossing episodes; the last window of an episode is zero-padded
  and ``mask`` says which steps are real::

      episode (T = 7):   s0 s1 s2 s3 s4 s5 s6
      length 4, period 4 [s0 s1 s2 s3] [s4 s5 s6 --]
      mask               [ 1  1  1  1] [ 1  1  1  0]

  ``obs`` has ``length + 1`` rows (the observation after the last step included); row ``i``
  is real where ``i <= mask.sum()``.

Values keep the space's nesting: Dict observations are dicts of tensors, Tuple ones tuples,
Text leaves (e.g. MiniGrid's mission) are Python strings. Tensors keep the stored dtype
(uint8 images stay uint8); rewards are float32. Items are NamedTuples, so the default
``DataLoader`` collate batches them (a batch of transitions has fields ``[B, ...]``, of
segments ``[B, L, ...]``)::

    from torch.utils.data import DataLoader
    from agents.dataset import TransitionDataset

    data = TransitionDataset("demos/MountainCar-v0")
    for batch in DataLoader(data, batch_size=256, shuffle=True):
        q = net(batch.obs)  # [256, 2] float32
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import torch
from torch.utils.data import Dataset

from demostudio.episode import (
    EpisodeData,
    EpisodeError,
    EpisodeFile,
    find_episodes,
    index_nested,
    load_episode,
    space_to_json,
)


class Transition(NamedTuple):
    obs: Any
    """[...] the observation before the step."""
    action: Any
    reward: torch.Tensor
    """[] float32."""
    next_obs: Any
    terminated: torch.Tensor
    """[] bool."""
    truncated: torch.Tensor
    """[] bool."""


class FramedTransition(NamedTuple):
    obs: Any
    action: Any
    reward: torch.Tensor
    next_obs: Any
    terminated: torch.Tensor
    truncated: torch.Tensor
    frame: torch.Tensor
    """[H, W, 3] uint8, the frame shown with ``obs``."""
    next_frame: torch.Tensor
    """[H, W, 3] uint8, the frame shown with ``next_obs``."""


class Segment(NamedTuple):
    obs: Any
    """[L+1, ...]."""
    action: Any
    """[L, ...]."""
    reward: torch.Tensor
    """[L] float32."""
    terminated: torch.Tensor
    """[L] bool."""
    truncated: torch.Tensor
    """[L] bool."""
    mask: torch.Tensor
    """[L] bool: True for real steps, False for padding."""
    episode: int
    """Index of the episode in :attr:`SegmentDataset.paths`."""
    start: int
    """The step the window starts at."""


class FramedSegment(NamedTuple):
    obs: Any
    action: Any
    reward: torch.Tensor
    terminated: torch.Tensor
    truncated: torch.Tensor
    mask: torch.Tensor
    episode: int
    start: int
    frames: torch.Tensor
    """[L+1, H, W, 3] uint8 (zeros where padded)."""


def _to_torch(value: Any) -> Any:
    """Arrays to tensors through dicts and tuples; strings stay strings."""
    if isinstance(value, dict):
        return {k: _to_torch(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_to_torch(v) for v in value)
    if isinstance(value, str):
        return value
    arr = np.asarray(value)
    if arr.dtype.kind == "O":  # a run of text values
        return [str(v) for v in arr.tolist()]
    return torch.from_numpy(np.array(arr, copy=True))


def _window(value: Any, start: int, stop: int, size: int) -> Any:
    """``value[start:stop]`` padded to ``size`` rows (zeros, or "" for text)."""
    if isinstance(value, dict):
        return {k: _window(v, start, stop, size) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_window(v, start, stop, size) for v in value)
    part = np.array(value[start:stop])  # a copy: tensors must not alias the episode
    if part.shape[0] == size:
        return part
    pad_value = "" if part.dtype.kind == "O" else 0
    out = np.full((size, *part.shape[1:]), pad_value, dtype=part.dtype)
    out[: part.shape[0]] = part
    return out


class _Episodes:
    """The episodes under ``paths``, loaded once (frames read on demand, per process)."""

    def __init__(self, paths: str | os.PathLike | Sequence[str | os.PathLike], frames: bool):
        self.paths = find_episodes(paths if isinstance(paths, (str, os.PathLike)) else list(paths))
        if not self.paths:
            raise EpisodeError(paths, None, "expected episode files (*.h5), found none")
        self.data: list[EpisodeData] = [load_episode(p) for p in self.paths]
        first = self.data[0].summary
        for d in self.data[1:]:
            for key in ("observation_space", "action_space"):
                mine, theirs = getattr(d.summary, key), getattr(first, key)
                if space_to_json(mine) != space_to_json(theirs):
                    raise EpisodeError(
                        d.summary.path,
                        key,
                        f"expected {theirs} like {first.path.name} (one dataset, one space), "
                        f"got {mine}",
                    )
        self.frames = frames
        if frames:
            for path in self.paths:
                with EpisodeFile(path) as ep:
                    if not ep.has_frames:
                        raise EpisodeError(
                            path, "frames", "expected frames (frames=True), recorded without"
                        )
        self.observation_space = first.observation_space
        self.action_space = first.action_space
        self._files: dict[int, EpisodeFile] = {}
        self._pid = -1

    def frame(self, episode: int, i: int) -> np.ndarray:
        if self._pid != os.getpid():  # a forked DataLoader worker opens its own files
            self._files = {}
            self._pid = os.getpid()
        ep = self._files.get(episode)
        if ep is None:
            ep = self._files[episode] = EpisodeFile(self.paths[episode])
        return ep.frame(i)

    def close(self) -> None:
        if self._pid == os.getpid():
            for ep in self._files.values():
                ep.close()
        self._files = {}

    def __getstate__(self) -> dict:  # open files stay with their process
        state = dict(self.__dict__)
        state["_files"] = {}
        state["_pid"] = -1
        return state


class TransitionDataset(Dataset):
    """Every step of every episode under ``paths`` (folders or files) as a
    :class:`Transition` (a :class:`FramedTransition` with ``frames=True``)."""

    def __init__(
        self,
        paths: str | os.PathLike | Sequence[str | os.PathLike],
        *,
        frames: bool = False,
    ):
        self._episodes = _Episodes(paths, frames)
        lengths = np.array([len(d) for d in self._episodes.data], dtype=np.int64)
        self._ends = np.cumsum(lengths)

    @property
    def paths(self) -> list[Path]:
        return self._episodes.paths

    @property
    def observation_space(self):
        return self._episodes.observation_space

    @property
    def action_space(self):
        return self._episodes.action_space

    def __len__(self) -> int:
        return int(self._ends[-1]) if len(self._ends) else 0

    def locate(self, index: int) -> tuple[int, int]:
        """(episode, step) of item ``index``."""
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"transition {index} out of range 0..{len(self) - 1}")
        episode = int(np.searchsorted(self._ends, index, side="right"))
        start = int(self._ends[episode - 1]) if episode else 0
        return episode, index - start

    def __getitem__(self, index: int) -> Transition | FramedTransition:
        episode, t = self.locate(int(index))
        d = self._episodes.data[episode]
        fields = {
            "obs": _to_torch(index_nested(d.observations, t)),
            "action": _to_torch(index_nested(d.actions, t)),
            "reward": torch.tensor(d.rewards[t], dtype=torch.float32),
            "next_obs": _to_torch(index_nested(d.observations, t + 1)),
            "terminated": torch.tensor(bool(d.terminations[t])),
            "truncated": torch.tensor(bool(d.truncations[t])),
        }
        if not self._episodes.frames:
            return Transition(**fields)
        return FramedTransition(
            **fields,
            frame=torch.from_numpy(self._episodes.frame(episode, t).copy()),
            next_frame=torch.from_numpy(self._episodes.frame(episode, t + 1).copy()),
        )

    def close(self) -> None:
        self._episodes.close()


class SegmentDataset(Dataset):
    """Windows of ``length`` steps starting every ``period`` steps (default: ``length``, no
    overlap) in each episode under ``paths``, as :class:`Segment` (or
    :class:`FramedSegment` with ``frames=True``); see the module docstring for padding."""

    def __init__(
        self,
        paths: str | os.PathLike | Sequence[str | os.PathLike],
        length: int,
        *,
        period: int | None = None,
        frames: bool = False,
    ):
        period = length if period is None else period
        if length < 1:
            raise ValueError(f"expected length >= 1, got {length}")
        if period < 1:
            raise ValueError(f"expected period >= 1, got {period}")
        self.length = length
        self.period = period
        self._episodes = _Episodes(paths, frames)
        self._index = [
            (e, start)
            for e, d in enumerate(self._episodes.data)
            for start in range(0, len(d), period)
        ]

    @property
    def paths(self) -> list[Path]:
        return self._episodes.paths

    @property
    def observation_space(self):
        return self._episodes.observation_space

    @property
    def action_space(self):
        return self._episodes.action_space

    def __len__(self) -> int:
        return len(self._index)

    def __getitem__(self, index: int) -> Segment | FramedSegment:
        episode, start = self._index[index]
        d = self._episodes.data[episode]
        L = self.length
        n = min(L, len(d) - start)  # real steps in this window
        mask = np.zeros(L, dtype=bool)
        mask[:n] = True
        fields = {
            "obs": _to_torch(_window(d.observations, start, start + n + 1, L + 1)),
            "action": _to_torch(_window(d.actions, start, start + n, L)),
            "reward": torch.from_numpy(_window(d.rewards, start, start + n, L).astype(np.float32)),
            "terminated": torch.from_numpy(_window(d.terminations, start, start + n, L)),
            "truncated": torch.from_numpy(_window(d.truncations, start, start + n, L)),
            "mask": torch.from_numpy(mask),
            "episode": episode,
            "start": start,
        }
        if not self._episodes.frames:
            return Segment(**fields)
        first = self._episodes.frame(episode, start)
        frames = np.zeros((L + 1, *first.shape), dtype=np.uint8)
        frames[0] = first
        for i in range(1, n + 1):
            frames[i] = self._episodes.frame(episode, start + i)
        return FramedSegment(**fields, frames=torch.from_numpy(frames))

    def close(self) -> None:
        self._episodes.close()


__all__ = [
    "FramedSegment",
    "FramedTransition",
    "Segment",
    "SegmentDataset",
    "Transition",
    "TransitionDataset",
]

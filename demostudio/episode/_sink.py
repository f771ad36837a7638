"""The HDF5 side of recording: the file an episode's growing columns (:mod:`._columns`) live in.

:class:`EpisodeSink` turns the writer thread's items (see :mod:`.writer`) into an episode file.
The writer feeds it live; recovery feeds it the items read back from a journal
(:mod:`.journal`), so a recovered file is built by exactly the code that builds a saved one.
"""

from __future__ import annotations

import os
from typing import Any

import h5py
import numpy as np
from gymnasium import spaces as gym_spaces

from . import _h5
from ._columns import _Column, _Infos
from ._record import flat_info, record_of
from .spaces import Leaf, leaves

__all__ = ["EpisodeSink", "flat_info", "record_of"]


class EpisodeSink:
    """One ``.h5`` file being written from items (dicts with a ``kind``):

    * ``attrs``: ``{"attrs": {name: JSON text}}``, root attributes;
    * ``reset``: ``obs`` (leaf values, or None when the observation is the frame), ``is_frame``,
      ``info`` (a :func:`flat_info`), ``frame`` (Packed or None), ``ts``;
    * ``step``: as ``reset`` plus ``act``, ``rew``, ``term``, ``trunc``, ``keys`` (JSON text)
      and ``actor`` (index into ``actor_names``).

    The file is flushed as soon as it is created, so it is a readable HDF5 file from the start.
    """

    def __init__(
        self,
        path: os.PathLike,
        observation_space: gym_spaces.Space,
        action_space: gym_spaces.Space,
        attrs: dict[str, str],
    ):
        # Default (earliest) file format: no superblock consistency flags, so a file left open
        # by a crash can still be opened for recovery.
        self.file = h5py.File(path, "w")
        try:
            self._start(observation_space, action_space, attrs)
        except BaseException:
            _h5.let_go(self.file)  # a full disk: never leave HDF5 a file it cannot close
            raise

    def _start(
        self,
        observation_space: gym_spaces.Space,
        action_space: gym_spaces.Space,
        attrs: dict[str, str],
    ) -> None:
        self._obs_leaves = leaves(observation_space)
        self._act_leaves = leaves(action_space)
        for key, text in attrs.items():
            self.file.attrs[key] = text
        f = self.file
        self._obs_cols: list[_Column] | None = None
        self._obs_linked = False
        self._act_cols = self._leaf_columns("actions", self._act_leaves)
        self._frames: _Column | None = None
        self._infos = _Infos(f)
        self._rewards = _Column(f, "rewards", (), np.dtype(np.float64))
        self._terms = _Column(f, "terminations", (), np.dtype(bool))
        self._truncs = _Column(f, "truncations", (), np.dtype(bool))
        self._times = _Column(f, "timestamps", (), np.dtype(np.float64))
        self._keys = _Column(f, "keys", (), _h5.TEXT)
        self._actors = _Column(f, "actors", (), np.dtype(np.uint8))
        self.reset_done = False
        self.steps = 0
        self.total_return = 0.0
        self.last_terminated = False
        self.flush()

    def _leaf_columns(self, group: str, specs: list[Leaf]) -> list[_Column]:
        return [
            _Column(
                self.file,
                "/".join((group, *leaf.path)),
                leaf.shape,
                _h5.TEXT if leaf.is_text else np.dtype(leaf.dtype),
            )
            for leaf in specs
        ]

    def handle(self, item: dict[str, Any]) -> None:
        kind = item["kind"]
        if kind == "attrs":
            for key, text in item["attrs"].items():
                self.file.attrs[key] = text
            return
        if kind not in ("reset", "step") or (kind == "step") != self.reset_done:
            raise ValueError(f"expected {'a step' if self.reset_done else 'the reset'}, got {kind}")
        frame = item["frame"]
        obs = item["obs"] if item["obs"] is not None else [frame]
        if kind == "reset":
            if frame is not None:
                self._frames = _Column(
                    self.file, "frames", frame.shape, np.dtype(np.uint8), big=True
                )
                self._frames.append(frame)
            if self._frames is not None and item["is_frame"]:
                # Image observations that are the rendered frame (ALE's RGB observations) are
                # stored once: ``observations`` is a hard link to ``frames``.
                self.file["observations"] = self._frames.dset
                self._obs_linked = True
            else:
                self._obs_cols = self._leaf_columns("observations", self._obs_leaves)
                for col, v in zip(self._obs_cols, obs):
                    col.append(v)
            self._infos.append(item["info"])
            self._times.append(item["ts"])
            self.reset_done = True
            return
        for col, v in zip(self._act_cols, item["act"]):
            col.append(v)
        if self._obs_linked and not item["is_frame"]:
            self._unlink_observations()
        if not self._obs_linked:
            for col, v in zip(self._obs_cols or [], obs):
                col.append(v)
        if self._frames is not None:
            self._frames.append(frame)
        self._rewards.append(item["rew"])
        self._terms.append(item["term"])
        self._truncs.append(item["trunc"])
        self._infos.append(item["info"])
        self._times.append(item["ts"])
        self._keys.append(item["keys"])
        self._actors.append(item["actor"])
        self.steps += 1
        self.total_return += float(item["rew"])
        self.last_terminated = bool(item["term"])

    def _unlink_observations(self) -> None:
        """An observation differed from its frame: give observations their own dataset,
        starting with copies of the frames so far."""
        assert self._frames is not None
        del self.file["observations"]
        self._obs_linked = False
        self._obs_cols = self._leaf_columns("observations", self._obs_leaves)
        for i in range(self._frames.rows):
            self._obs_cols[0].append(self._frames.dset[i])

    def _all_columns(self) -> list[_Column]:
        cols = [self._rewards, self._terms, self._truncs, self._times, self._keys, self._actors]
        cols += self._obs_cols or []
        cols += self._act_cols
        if self._frames is not None:
            cols.append(self._frames)
        return cols + self._infos.all_columns()

    def flush(self) -> None:
        """Write buffered rows and HDF5's metadata (to the OS: see the journal for crashes)."""
        for col in self._all_columns():
            col.flush()
        self.file.attrs["flushed_steps"] = _h5.to_json(self.steps if self.reset_done else -1)
        self.file.flush()

    def finish(self) -> None:
        """Flush everything, trim the columns to their length and close the file."""
        self.flush()
        for col in self._all_columns():
            col.finish()
        self.file.flush()
        self.file.close()

    def close(self) -> None:
        self.file.close()

    def abandon(self) -> None:
        """Close the file after a failed write (see :func:`._h5.let_go`); never raises."""
        _h5.let_go(self.file)

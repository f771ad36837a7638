"""An open episode file: its root attributes and layout checked on opening, then random access
to steps and frames and whole arrays for training."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import h5py
import numpy as np
from gymnasium import spaces as gym_spaces

from ._decode import _check_finite, _json_cell, _key_list, _widened
from .actors import Actors, actor_stats, read_actors
from .attrs import read_attr, read_attrs
from .hostile import check_declared, checked_datasets, guard, open_h5, read_rows
from .records import EpisodeData, EpisodeSummary, StepRecord, StepScalars
from .schema import (
    FORMAT_NAME,
    REQUIRED_ATTRS,
    SCHEMA_VERSION,
    EpisodeError,
    SchemaVersionError,
)
from .spaces import first_outside, leaves, space_from_json, unflatten_batch

FINITE = ("rewards", "timestamps")
"""Datasets that hold finite numbers only (so do the float leaves of observations and actions)."""
BLOCK_BYTES = 16 * 1024 * 1024
"""Most bytes read at once when a whole dataset is checked."""


class EpisodeFile:
    """An open episode file. Opening reads the root attributes and checks the file's layout:
    every link, where each dataset keeps its data, and every declared shape against the schema
    and the episode length, all before any array is read."""

    def __init__(self, path: str | os.PathLike, mode: str = "r"):
        self.path = Path(path)
        self._f = open_h5(self.path, mode)
        try:
            with guard(self.path, None):
                self._attrs = self._read_attrs()
                self.summary = self._make_summary()
                self._datasets = checked_datasets(self._f, self.path)
                self.check_lengths()
        except BaseException:
            self._f.close()
            raise
        self._frames_ds = self._datasets.get("frames")

    # ---- metadata --------------------------------------------------------------------------

    def _read_attrs(self) -> dict[str, Any]:
        try:
            fmt = read_attr(self._f, "format", self.path)
        except (KeyError, EpisodeError):
            fmt = None
        if fmt != FORMAT_NAME:
            raise EpisodeError(
                self.path,
                "format",
                f"expected a DemoStudio episode (format {FORMAT_NAME!r}), got "
                + ("an HDF5 file without that attribute" if fmt is None else repr(fmt)),
            )
        try:
            version = read_attr(self._f, "schema_version", self.path)
        except KeyError:
            raise EpisodeError(
                self.path, "schema_version", "expected this attribute, it is missing"
            ) from None
        if version > SCHEMA_VERSION:
            raise SchemaVersionError(
                self.path,
                "schema_version",
                f"written with schema version {version}; this DemoStudio reads up to "
                f"{SCHEMA_VERSION}: upgrade demostudio to open it",
            )
        attrs = read_attrs(self._f, self.path)
        for key in REQUIRED_ATTRS:
            if key not in attrs:
                raise EpisodeError(self.path, key, "expected this attribute, it is missing")
        return attrs

    def _make_summary(self) -> EpisodeSummary:
        a = self._attrs
        spaces = {}
        for key in ("observation_space", "action_space"):
            try:
                spaces[key] = space_from_json(a[key])
            except ValueError as exc:
                raise EpisodeError(self.path, key, str(exc)) from None
        meanings = a.get("action_meanings")
        try:
            size = self.path.stat().st_size
        except OSError:
            size = 0
        acted = actor_stats(self.path, self._f, a, a["length"])
        return EpisodeSummary(
            path=self.path,
            env_id=a["env_id"],
            env_kwargs=a["env_kwargs"],
            seed=a.get("seed"),
            controller=a["controller"],
            player=a.get("player") or "",
            length=a["length"],
            total_return=float(a["total_return"]),
            terminated=a["terminated"],
            truncated=a["truncated"],
            recorded_at=a["recorded_at"],
            tags=tuple(a.get("tags") or ()),
            notes=a.get("notes") or "",
            recovered=a.get("recovered", False),
            fps=a.get("fps"),
            size_bytes=size,
            observation_space=spaces["observation_space"],
            action_space=spaces["action_space"],
            action_meanings=tuple(meanings) if meanings else None,
            attrs=a,
            human_share=acted.human_share,
            takeovers=acted.takeovers,
        )

    @property
    def attrs(self) -> dict[str, Any]:
        return self._attrs

    @property
    def h5(self) -> h5py.File:
        """The underlying h5py file (read-only use; for ``info`` and validation)."""
        return self._f

    def __len__(self) -> int:
        return self.summary.length

    @property
    def actors(self) -> Actors:
        """Who took each step: ``actors`` [T] uint8 indexing ``names``."""
        return read_actors(self.path, self._f, self._attrs, self.summary.length)

    @property
    def has_frames(self) -> bool:
        return isinstance(self._frames_ds, h5py.Dataset)

    @property
    def datasets(self) -> dict[str, h5py.Dataset]:
        """Every dataset of the file by name, each checked when the file was opened."""
        return self._datasets

    @property
    def frame_shape(self) -> tuple[int, int, int] | None:
        return tuple(self._frames_ds.shape[1:]) if self.has_frames else None

    # ---- random access ---------------------------------------------------------------------

    def _check_index(self, i: int, n: int, what: str) -> int:
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"{self.path}: {what} index {i} out of range 0..{n - 1}")
        return i

    def frame(self, i: int) -> np.ndarray:
        """The RGB frame ``i`` (0 = after reset, t+1 = after step t) as [H, W, 3] uint8."""
        if not self.has_frames:
            raise EpisodeError(self.path, "frames", "this episode was recorded without frames")
        ds = self._frames_ds
        i = self._check_index(i, ds.shape[0], "frame")
        with guard(self.path, "frames"):
            return read_rows(ds, i)

    def _leaf_read(self, group: str, space: gym_spaces.Space, index: Any) -> Any:
        arrays = {}
        for leaf in leaves(space):
            name = "/".join((group, *leaf.path))
            with guard(self.path, name):
                value = read_rows(self._datasets[name], index)
                batch = isinstance(index, slice)
                first = (index.start or 0) if batch else int(index)
                _check_finite(self.path, name, value, first, batch)
                if leaf.is_text:
                    value = (
                        value.decode("utf-8")
                        if isinstance(value, bytes)
                        else np.array([v.decode("utf-8") for v in value], dtype=object)
                    )
            arrays[leaf.path] = value
        return unflatten_batch(space, arrays)

    def observation(self, i: int) -> Any:
        i = self._check_index(i, self.summary.length + 1, "observation")
        return self._leaf_read("observations", self.summary.observation_space, i)

    def action(self, t: int) -> Any:
        t = self._check_index(t, self.summary.length, "step")
        return self._leaf_read("actions", self.summary.action_space, t)

    def _group(self, prefix: str) -> dict[str, h5py.Dataset]:
        """The checked datasets under group ``prefix``, keyed by their name inside it."""
        cut = len(prefix) + 1
        return {n[cut:]: d for n, d in self._datasets.items() if n.startswith(prefix + "/")}

    def info(self, i: int) -> dict[str, Any]:
        """The info of index ``i`` (0 = reset), numeric and JSON leaves, absent keys left out."""
        out: dict[str, Any] = {}
        present = self._group("info_present")
        for name, ds in self._group("infos").items():
            with guard(self.path, f"infos/{name}"):
                if name in present and not present[name][i]:
                    continue
                value = ds[i]
                if h5py.check_string_dtype(ds.dtype) is not None:
                    value = _json_cell(value)
                elif isinstance(value, np.generic):
                    value = value.item()
            out[name] = value
        return out

    def keys_at(self, t: int) -> list[str]:
        ds = self._datasets.get("keys")
        if ds is None:
            return []
        with guard(self.path, "keys"):
            return _key_list(ds[t])

    def _scalar(self, name: str, i: int) -> Any:
        with guard(self.path, name):
            return self._datasets[name][i]

    def step(self, t: int) -> StepRecord:
        t = self._check_index(t, self.summary.length, "step")
        return StepRecord(
            index=t,
            observation=self.observation(t),
            action=self.action(t),
            reward=float(self._scalar("rewards", t)),
            terminated=bool(self._scalar("terminations", t)),
            truncated=bool(self._scalar("truncations", t)),
            next_observation=self.observation(t + 1),
            info=self.info(t + 1),
            keys=self.keys_at(t),
            timestamp=float(self._scalar("timestamps", t + 1)),
        )

    # ---- whole arrays ----------------------------------------------------------------------

    def check_lengths(self) -> None:
        """Raise EpisodeError if a dataset is missing or its length disagrees with ``length``
        or its values' shape or dtype disagree with the spaces (checked when the file is
        opened, before any array is read)."""
        s = self.summary
        check_declared(
            self.path, s.length, s.observation_space, s.action_space, self._datasets, self._f
        )

    def _whole(self, name: str) -> np.ndarray:
        with guard(self.path, name):
            values = read_rows(self._datasets[name], slice(None))
        if name in FINITE:
            _check_finite(self.path, name, values, 0)
        return values

    def check_finite(self) -> None:
        """EpisodeError naming the first dataset (and row) of rewards, timestamps and float
        observations that holds NaN or infinity; observations are read a block of rows at a
        time. (Actions are checked whenever they are read.)"""
        for name in FINITE:
            self._whole(name)
        for leaf in leaves(self.summary.observation_space):
            name = "/".join(("observations", *leaf.path))
            ds = self._datasets[name]
            if ds.dtype.kind != "f":
                continue
            step = max(1, BLOCK_BYTES // max(1, ds.dtype.itemsize * math.prod(ds.shape[1:])))
            for first in range(0, ds.shape[0], step):
                with guard(self.path, name):
                    rows = read_rows(ds, slice(first, first + step))
                _check_finite(self.path, name, rows, first)

    def scalars(self) -> StepScalars:
        """Rewards, terminations and truncations of every step (no observations read)."""
        return StepScalars(
            rewards=self._whole("rewards").astype(np.float64),
            terminations=self._whole("terminations").astype(bool),
            truncations=self._whole("truncations").astype(bool),
        )

    def actions(self) -> Any:
        """The actions of every step ([T, ...] per leaf), checked against the action space:
        EpisodeError naming the first step whose action is outside it."""
        space = self.summary.action_space
        actions = self._leaf_read("actions", space, slice(None))
        bad = first_outside(space, actions)
        if bad is not None:
            step, leaf, expected, got = bad
            raise EpisodeError(
                self.path,
                "/".join(("actions", *leaf)),
                f"step {step}: expected an action in {expected}, got {got}",
            )
        return _widened(space, actions)

    def keys(self) -> list[list[str]]:
        """The key names held at each step (empty lists when not recorded)."""
        if "keys" not in self._datasets:
            return [[] for _ in range(self.summary.length)]
        with guard(self.path, "keys"):
            return [_key_list(k) for k in self._whole("keys")]

    def check_data(self) -> None:
        """Read the small per-step datasets and check their values (actions inside the
        action space, keys as JSON lists, finite rewards, timestamps and float observations):
        EpisodeError naming the first problem. Frames and whole-number observations (images)
        are not read."""
        self.actions()
        self.keys()
        self.check_finite()

    def load(self, frames: bool = False) -> EpisodeData:
        """Every array of the episode (frames only when asked: they are the bulk). Actions are
        checked against the action space (EpisodeError naming the first bad step)."""
        s = self.summary
        scalars = self.scalars()
        acted = self.actors
        infos = {name: self._whole(f"infos/{name}") for name in self._group("infos")}
        info_present = {
            name: self._whole(f"info_present/{name}").astype(bool)
            for name in self._group("info_present")
        }
        keys = self.keys()
        actions = self.actions()
        return EpisodeData(
            summary=s,
            observations=self._leaf_read("observations", s.observation_space, slice(None)),
            actions=actions,
            rewards=scalars.rewards,
            terminations=scalars.terminations,
            truncations=scalars.truncations,
            timestamps=self._whole("timestamps"),
            infos=infos,
            info_present=info_present,
            keys=keys,
            frames=self._whole("frames") if frames and self.has_frames else None,
            actors=acted.actors,
            actor_names=acted.names,
        )

    # ---- lifecycle -------------------------------------------------------------------------

    def close(self) -> None:
        self._f.close()

    def __enter__(self) -> EpisodeFile:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

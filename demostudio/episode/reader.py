"""Reading episode files: a lazy summary, random access to single steps and frames, and whole
arrays for training."""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import h5py
import numpy as np
from gymnasium import spaces as gym_spaces

from . import _h5
from .actors import Actors, actor_stats, read_actors
from .schema import (
    FORMAT_NAME,
    LENGTH_OFFSETS,
    PARTIAL_SUFFIX,
    REQUIRED_ATTRS,
    REQUIRED_DATASETS,
    SCHEMA_VERSION,
    SUFFIX,
    EpisodeError,
    SchemaVersionError,
)
from .spaces import leaves, space_from_json, unflatten_batch


@dataclass(frozen=True)
class EpisodeSummary:
    """An episode's metadata, read without touching its arrays."""

    path: Path
    env_id: str
    env_kwargs: dict[str, Any]
    seed: int | None
    controller: str
    player: str
    length: int
    total_return: float
    terminated: bool
    truncated: bool
    recorded_at: str
    tags: tuple[str, ...]
    notes: str
    recovered: bool
    fps: float | None
    size_bytes: int
    observation_space: gym_spaces.Space
    action_space: gym_spaces.Space
    action_meanings: tuple[str, ...] | None
    attrs: dict[str, Any] = field(repr=False)
    """Every root attribute, JSON-decoded."""
    human_share: float = 0.0
    """Share of the steps a person took (see :mod:`demostudio.episode.actors`)."""
    takeovers: int = 0
    """How many times a person took over from an agent."""


@dataclass(frozen=True)
class EpisodeData:
    """A whole episode in memory. Arrays follow the space's nesting (dict / tuple / array)."""

    summary: EpisodeSummary
    observations: Any
    """[T+1, ...] per leaf."""
    actions: Any
    """[T, ...] per leaf."""
    rewards: np.ndarray
    """[T] float64."""
    terminations: np.ndarray
    """[T] bool."""
    truncations: np.ndarray
    """[T] bool."""
    timestamps: np.ndarray
    """[T+1] float64 wall-clock seconds."""
    infos: dict[str, np.ndarray]
    """[T+1, ...] per flattened info key ("a/b" for nested dicts)."""
    info_present: dict[str, np.ndarray]
    """[T+1] bool for the info keys that some row lacks (absent rows hold the fill value)."""
    keys: list[list[str]]
    """The key names held at each of the T steps (empty lists when not recorded)."""
    frames: np.ndarray | None
    """[T+1, H, W, 3] uint8 when loaded with ``frames=True`` and the file has them."""
    actors: np.ndarray
    """[T] uint8: who took each step, an index into ``actor_names``."""
    actor_names: list[str]
    """``person:<player>``, ``policy:<name>``, ... (version-1 files: the controller)."""

    def __len__(self) -> int:
        return int(self.rewards.shape[0])


class StepScalars(NamedTuple):
    """The per-step scalars of a whole episode, without its observations."""

    rewards: np.ndarray
    """[T] float64."""
    terminations: np.ndarray
    """[T] bool."""
    truncations: np.ndarray
    """[T] bool."""


@dataclass(frozen=True)
class StepRecord:
    """One step ``t``: the observation before it, the action, and what followed."""

    index: int
    observation: Any
    action: Any
    reward: float
    terminated: bool
    truncated: bool
    next_observation: Any
    info: dict[str, Any]
    keys: list[str]
    timestamp: float


def _read_dataset(path: Path, f: h5py.File, name: str) -> np.ndarray:
    try:
        obj = f[name]
    except KeyError:
        raise EpisodeError(path, name, "expected this dataset, it is missing") from None
    if not isinstance(obj, h5py.Dataset):
        raise EpisodeError(path, name, f"expected a dataset, got a {type(obj).__name__}")
    return obj


class EpisodeFile:
    """An open episode file. Opening reads only the root attributes."""

    def __init__(self, path: str | os.PathLike, mode: str = "r"):
        self.path = Path(path)
        try:
            self._f = h5py.File(self.path, mode)
        except FileNotFoundError:
            raise EpisodeError(self.path, None, "no such file") from None
        except OSError as exc:
            raise EpisodeError(
                self.path, None, f"expected an HDF5 episode file, cannot open it ({exc})"
            ) from None
        try:
            self._attrs = self._read_attrs()
            self.summary = self._make_summary()
        except BaseException:
            self._f.close()
            raise
        self._frames_ds = self._f.get("frames")
        self._frame_raw_ok = (
            isinstance(self._frames_ds, h5py.Dataset)
            and self._frames_ds.chunks is not None
            and self._frames_ds.chunks[0] == 1
            and self._frames_ds.compression == "gzip"
            and not self._frames_ds.shuffle
        )

    # ---- metadata --------------------------------------------------------------------------

    def _read_attrs(self) -> dict[str, Any]:
        try:
            fmt = _h5.read_json_attr(self._f, "format")
        except (KeyError, ValueError, UnicodeDecodeError):
            fmt = None
        if fmt != FORMAT_NAME:
            raise EpisodeError(
                self.path,
                "format",
                f"expected a DemoStudio episode (format {FORMAT_NAME!r}), got "
                + ("an HDF5 file without that attribute" if fmt is None else repr(fmt)),
            )
        attrs: dict[str, Any] = {}
        for key in self._f.attrs:
            try:
                attrs[key] = _h5.read_json_attr(self._f, key)
            except (ValueError, UnicodeDecodeError) as exc:
                raise EpisodeError(self.path, key, f"expected a JSON attribute ({exc})") from None
        version = attrs.get("schema_version")
        if not isinstance(version, int):
            raise EpisodeError(self.path, "schema_version", f"expected an integer, got {version!r}")
        if version > SCHEMA_VERSION:
            raise SchemaVersionError(
                self.path,
                "schema_version",
                f"written with schema version {version}; this DemoStudio reads up to "
                f"{SCHEMA_VERSION}: upgrade demostudio to open it",
            )
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
        length = a["length"]
        if not isinstance(length, int) or length < 0:
            raise EpisodeError(self.path, "length", f"expected a count >= 0, got {length!r}")
        meanings = a.get("action_meanings")
        try:
            size = self.path.stat().st_size
        except OSError:
            size = 0
        acted = actor_stats(self.path, self._f, a, length)
        return EpisodeSummary(
            path=self.path,
            env_id=str(a["env_id"]),
            env_kwargs=dict(a.get("env_kwargs") or {}),
            seed=a.get("seed"),
            controller=str(a["controller"]),
            player=str(a.get("player") or ""),
            length=length,
            total_return=float(a["total_return"]),
            terminated=bool(a["terminated"]),
            truncated=bool(a["truncated"]),
            recorded_at=str(a["recorded_at"]),
            tags=tuple(a.get("tags") or ()),
            notes=str(a.get("notes") or ""),
            recovered=bool(a.get("recovered", False)),
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
        if self._frame_raw_ok:
            mask, raw = ds.id.read_direct_chunk((i, 0, 0, 0))
            if mask == 0:
                return np.frombuffer(zlib.decompress(raw), np.uint8).reshape(ds.shape[1:])
        return ds[i]

    def _leaf_read(self, group: str, space: gym_spaces.Space, index: Any) -> Any:
        arrays = {}
        for leaf in leaves(space):
            name = "/".join((group, *leaf.path))
            ds = _read_dataset(self.path, self._f, name)
            value = ds[index]
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

    def info(self, i: int) -> dict[str, Any]:
        """The info of index ``i`` (0 = reset), numeric and JSON leaves, absent keys left out."""
        out: dict[str, Any] = {}
        infos = self._f.get("infos")
        if infos is None:
            return out
        present = self._f.get("info_present")
        for name, ds in _walk(infos):
            if present is not None and name in present and not present[name][i]:
                continue
            value = ds[i]
            if ds.dtype.kind == "O" or h5py.check_string_dtype(ds.dtype):
                text = value.decode("utf-8") if isinstance(value, bytes) else value
                try:
                    value = json.loads(text)
                except ValueError:
                    value = text
            elif isinstance(value, np.generic):
                value = value.item()
            out[name] = value
        return out

    def keys_at(self, t: int) -> list[str]:
        ds = self._f.get("keys")
        if ds is None:
            return []
        raw = ds[t]
        return json.loads(raw.decode("utf-8") if isinstance(raw, bytes) else raw)

    def step(self, t: int) -> StepRecord:
        t = self._check_index(t, self.summary.length, "step")
        return StepRecord(
            index=t,
            observation=self.observation(t),
            action=self.action(t),
            reward=float(self._f["rewards"][t]),
            terminated=bool(self._f["terminations"][t]),
            truncated=bool(self._f["truncations"][t]),
            next_observation=self.observation(t + 1),
            info=self.info(t + 1),
            keys=self.keys_at(t),
            timestamp=float(self._f["timestamps"][t + 1]),
        )

    # ---- whole arrays ----------------------------------------------------------------------

    def check_lengths(self) -> None:
        """Raise EpisodeError if a dataset is missing or its length disagrees with ``length``."""
        n = self.summary.length
        for name in REQUIRED_DATASETS:
            if name not in self._f:
                raise EpisodeError(self.path, name, "expected this dataset, it is missing")
        for name, ds in _walk(self._f):
            offset = LENGTH_OFFSETS.get(name.split("/")[0])
            if offset is None:
                continue
            if ds.shape[:1] != (n + offset,):
                got = ds.shape[0] if ds.shape else "a scalar"
                raise EpisodeError(
                    self.path, name, f"expected length {n + offset} (T = {n}), got {got}"
                )

    def scalars(self) -> StepScalars:
        """Rewards, terminations and truncations of every step (no observations read)."""
        self.check_lengths()
        return StepScalars(
            rewards=self._f["rewards"][()].astype(np.float64),
            terminations=self._f["terminations"][()].astype(bool),
            truncations=self._f["truncations"][()].astype(bool),
        )

    def load(self, frames: bool = False) -> EpisodeData:
        """Every array of the episode (frames only when asked: they are the bulk)."""
        s = self.summary
        scalars = self.scalars()
        acted = self.actors
        infos = {name: ds[()] for name, ds in _walk(self._f["infos"])} if "infos" in self._f else {}
        present = self._f.get("info_present")
        info_present = {name: ds[()].astype(bool) for name, ds in _walk(present)} if present else {}
        keys_ds = self._f.get("keys")
        keys = (
            [json.loads(k.decode("utf-8") if isinstance(k, bytes) else k) for k in keys_ds[()]]
            if keys_ds is not None
            else [[] for _ in range(s.length)]
        )
        return EpisodeData(
            summary=s,
            observations=self._leaf_read("observations", s.observation_space, slice(None)),
            actions=self._leaf_read("actions", s.action_space, slice(None)),
            rewards=scalars.rewards,
            terminations=scalars.terminations,
            truncations=scalars.truncations,
            timestamps=self._f["timestamps"][()],
            infos=infos,
            info_present=info_present,
            keys=keys,
            frames=self._frames_ds[()] if frames and self.has_frames else None,
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


def _walk(group: h5py.Group, prefix: str = "") -> Iterator[tuple[str, h5py.Dataset]]:
    for key, obj in group.items():
        name = f"{prefix}{key}"
        if isinstance(obj, h5py.Dataset):
            yield name, obj
        elif isinstance(obj, h5py.Group):
            yield from _walk(obj, name + "/")


def open_episode(path: str | os.PathLike) -> EpisodeFile:
    """Open an episode lazily (use as a context manager)."""
    return EpisodeFile(path)


def load_episode(path: str | os.PathLike, frames: bool = False) -> EpisodeData:
    """Read a whole episode into memory."""
    with EpisodeFile(path) as ep:
        return ep.load(frames=frames)


def read_summary(path: str | os.PathLike) -> EpisodeSummary:
    with EpisodeFile(path) as ep:
        return ep.summary


def find_episodes(
    paths: str | os.PathLike | list[str | os.PathLike], recursive: bool = True
) -> list[Path]:
    """Episode files (``*.h5``) in the given files and folders, sorted by path.

    A folder is searched recursively; ``.partial`` files are never included. A path that does
    not exist raises FileNotFoundError naming it."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            pattern = f"**/*{SUFFIX}" if recursive else f"*{SUFFIX}"
            out.extend(q for q in p.glob(pattern) if q.is_file())
        elif p.is_file():
            out.append(p)
        else:
            raise FileNotFoundError(f"{p}: no such episode file or folder")
    return sorted(set(out))


def find_partials(folder: str | os.PathLike) -> list[Path]:
    return sorted(Path(folder).glob(f"**/*{PARTIAL_SUFFIX}"))


def update_metadata(
    path: str | os.PathLike, *, tags: list[str] | None = None, notes: str | None = None
) -> None:
    """Change an episode's tags and notes in place (the only metadata that is editable)."""
    with EpisodeFile(path, mode="r+") as ep:
        if tags is not None:
            clean = sorted({str(t).strip() for t in tags if str(t).strip()})
            _h5.write_attrs(ep.h5, {"tags": clean})
        if notes is not None:
            _h5.write_attrs(ep.h5, {"notes": str(notes)})
        ep.h5.flush()

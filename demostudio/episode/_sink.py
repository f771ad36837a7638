"""The HDF5 side of recording: growing columns and the file they live in.

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
from .journal import Packed
from .spaces import Leaf, leaves


class _Column:
    """One growing dataset. Big values are compressed and written a chunk at a time as they
    come; small ones are buffered and written at each flush."""

    def __init__(
        self,
        file: h5py.File,
        name: str,
        shape: tuple[int, ...],
        dtype: np.dtype,
        start_rows: int = 0,
        big: bool | None = None,
    ):
        self.name = name
        self.shape = shape
        self.dtype = dtype
        self.big = _h5.is_big(shape, dtype) if big is None else big
        self.fill = None if dtype == _h5.TEXT else _h5.fill_value_for(dtype)
        self.rows = 0  # rows appended so far (buffered or written)
        self.written = 0  # rows on disk (small columns)
        self.pending: list[Any] = []
        if self.big:
            self.dset = file.create_dataset(
                name,
                shape=(0, *shape),
                maxshape=(None, *shape),
                dtype=dtype,
                chunks=(1, *shape),
                compression="gzip",
                compression_opts=_h5.DEFLATE_LEVEL,
            )
            self.capacity = 0
        else:
            row_bytes = max(1, int(np.prod(shape, dtype=np.int64)) * max(dtype.itemsize, 1))
            chunk_rows = max(16, min(_h5.SMALL_CHUNK_ROWS, 65536 // row_bytes))
            kwargs: dict[str, Any] = {}
            if self.fill is not None:
                kwargs["fillvalue"] = self.fill
            self.dset = file.create_dataset(
                name,
                shape=(0, *shape),
                maxshape=(None, *shape),
                dtype=dtype,
                chunks=(chunk_rows, *shape),
                **kwargs,
            )
        for _ in range(start_rows):
            self.append(None)

    def append(self, value: Any) -> None:
        """Append one row; ``None`` means the fill value. Big values may come deflated already
        (:class:`Packed`, as the writer thread journals them), so they are deflated once."""
        if self.big:
            if self.rows >= self.capacity:
                self.capacity = max(64, self.capacity * 2)
                self.dset.resize(self.capacity, axis=0)
            if not isinstance(value, Packed) or value.dtype != self.dtype:
                arr = np.full(self.shape, self.fill, self.dtype) if value is None else value
                arr = value.unpack() if isinstance(arr, Packed) else arr
                value = Packed.of(np.asarray(arr, dtype=self.dtype), _h5.DEFLATE_LEVEL)
            if value.shape != self.shape:
                raise ValueError(f"expected shape {self.shape}, got {value.shape}")
            self.dset.id.write_direct_chunk((self.rows,) + (0,) * len(self.shape), value.data)
        else:
            self.pending.append(value.unpack() if isinstance(value, Packed) else value)
        self.rows += 1

    def flush(self) -> None:
        if self.big:
            return
        if not self.pending:
            return
        n = len(self.pending)
        if self.dtype == _h5.TEXT:
            block = np.array(["" if v is None else v for v in self.pending], dtype=object)
        else:
            block = np.full((n, *self.shape), self.fill, dtype=self.dtype)
            for i, v in enumerate(self.pending):
                if v is not None:
                    block[i] = v
        self.dset.resize(self.written + n, axis=0)
        self.dset[self.written : self.written + n] = block
        self.written += n
        self.pending.clear()

    def finish(self) -> None:
        self.flush()
        if self.big:
            self.dset.resize(self.rows, axis=0)


def _numeric_leaf(value: Any) -> np.ndarray | None:
    """``value`` as a numeric array when it is one (bool, int, float, numeric ndarray)."""
    if isinstance(value, (bool, int, float, np.number, np.bool_)):
        arr = np.asarray(value)
    elif isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        arr = value
    else:
        return None
    if arr.dtype.kind in "iu":
        arr = arr.astype(np.int64)
    elif arr.dtype.kind == "f":
        arr = arr.astype(np.float64)
    return arr


def _fits(arr: np.ndarray, dtype: np.dtype) -> bool:
    """Whether ``arr`` converts to ``dtype`` with no value changed (2 -> 2.0 yes, 2.5 -> 2 no)."""
    if np.can_cast(arr.dtype, dtype, "safe"):
        return True
    with np.errstate(all="ignore"):
        return bool(np.array_equal(arr.astype(dtype), arr))


def flat_info(info: dict) -> dict[str, np.ndarray | str]:
    """``info`` flattened ("a/b" for nested dicts): numeric leaves as int64 / float64 / bool
    arrays, anything else as text (strings as they are, other values as JSON)."""
    out: dict[str, np.ndarray | str] = {}
    for name, value in _flatten_info(info or {}).items():
        arr = _numeric_leaf(value)
        if arr is not None:
            out[name] = arr
        else:
            out[name] = value if isinstance(value, str) else _h5.to_json(value)
    return out


def _flatten_info(info: dict, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in info.items():
        name = f"{prefix}{str(key).replace('/', '_')}"
        if isinstance(value, dict) and value:
            out.update(_flatten_info(value, name + "/"))
        else:
            out[name] = value
    return out


def record_of(item: tuple, record_frames: bool, keeping_up: bool = False) -> dict[str, Any]:
    """The journal's and the sink's form (see :class:`EpisodeSink`) of an item the writer
    queued: ``("attrs", {name: value})``, ``("reset", obs leaves, info, frame, ts)`` or
    ``("step", action leaves, obs leaves, reward, terminated, truncated, info, frame, ts,
    keys JSON, actor)``; info flattened, frames and other big arrays deflated once, harder
    while the writer ``keeping_up`` (:func:`_h5.deflate_level`)."""
    kind = item[0]
    if kind == "attrs":
        return {"kind": "attrs", "attrs": {k: _h5.to_json(v) for k, v in item[1].items()}}
    if kind == "reset":
        _, obs, info, frame, ts = item
    else:
        _, act, obs, rew, term, trunc, info, frame, ts, keys, actor = item
    if not record_frames:
        frame = None
    is_frame = _is_frame(obs, frame)
    record = {
        "kind": kind,
        "obs": None if is_frame else [_pack_big(v, keeping_up) for v in obs],
        "is_frame": is_frame,
        "info": flat_info(info or {}),
        "frame": None if frame is None else _pack_big(frame, keeping_up, always=True),
        "ts": ts,
    }
    if kind == "step":
        record.update(
            act=[_pack_big(v, keeping_up) for v in act],
            rew=rew,
            term=term,
            trunc=trunc,
            keys=keys,
            actor=actor,
        )
    return record


def _is_frame(obs: list[Any], frame: np.ndarray | None) -> bool:
    """Whether a single-leaf observation is exactly the rendered frame."""
    if frame is None or len(obs) != 1 or not isinstance(obs[0], np.ndarray):
        return False
    o = obs[0]
    return o.dtype == np.uint8 and o.shape == frame.shape and np.array_equal(o, frame)


def _pack_big(value: Any, keeping_up: bool, always: bool = False) -> Any:
    """A big array (a frame, a frame-sized observation; ``always``: any array) deflated
    once, for the journal and HDF5."""
    if isinstance(value, np.ndarray) and (always or _h5.is_big(value.shape, value.dtype)):
        return Packed.of(value, _h5.deflate_level(value.nbytes, keeping_up))
    return value


class _Infos:
    """Info columns created as keys appear; missing values are filled and marked absent."""

    def __init__(self, file: h5py.File):
        self.file = file
        self.columns: dict[str, _Column] = {}
        self.present: dict[str, _Column] = {}
        self.rows = 0

    def append(self, flat: dict[str, np.ndarray | str]) -> None:
        """Append one row of a :func:`flat_info`: numeric leaves as arrays, the rest as text."""
        for name, value in flat.items():
            arr = value if isinstance(value, np.ndarray) else None
            col = self.columns.get(name)
            if col is None:
                if arr is not None:
                    col = _Column(self.file, f"infos/{name}", arr.shape, arr.dtype, self.rows)
                else:
                    col = _Column(self.file, f"infos/{name}", (), _h5.TEXT, self.rows)
                self.columns[name] = col
                if self.rows:
                    self._mark_absent_before(name)
            if col.dtype == _h5.TEXT:
                col.append(value if isinstance(value, str) else _h5.to_json(value))
                ok = True
            elif arr is not None and arr.shape == col.shape and _fits(arr, col.dtype):
                col.append(arr.astype(col.dtype))
                ok = True
            else:  # shape or type changed mid-episode, not storable as is: marked absent
                col.append(None)
                ok = False
            if not ok:
                self._ensure_present(name)
            if name in self.present:
                self.present[name].append(ok)
        for name, col in self.columns.items():
            if name not in flat:
                col.append(None)
                self._ensure_present(name)
                self.present[name].append(False)
        self.rows += 1

    def _mark_absent_before(self, name: str) -> None:
        col = _Column(self.file, f"info_present/{name}", (), np.dtype(bool))
        for _ in range(self.rows):
            col.append(False)
        self.present[name] = col

    def _ensure_present(self, name: str) -> None:
        if name in self.present:
            return
        col = _Column(self.file, f"info_present/{name}", (), np.dtype(bool))
        already = self.columns[name].rows - 1  # rows before the current one were present
        for _ in range(already):
            col.append(True)
        self.present[name] = col

    def all_columns(self) -> list[_Column]:
        return [*self.columns.values(), *self.present.values()]


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

"""Crash-safe, streaming episode writer.

The caller's thread only copies arrays and puts them on a bounded queue; a writer thread owns
the HDF5 file, compresses big values (frames, image observations) one chunk each, buffers
small ones and writes them in blocks. The file is ``<name>.h5.partial`` until :meth:`close`,
which flushes, fsyncs and renames it to ``<name>.h5``. The queue blocks rather than drops;
:attr:`EpisodeWriter.blocked_puts` counts how often it had to.
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import threading
import time
import weakref
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import h5py
import numpy as np
from gymnasium import spaces as gym_spaces

from . import _h5
from .actors import MAX_ACTORS, default_actor
from .schema import FORMAT_NAME, PARTIAL_SUFFIX, SCHEMA_VERSION, SUFFIX, EpisodeError
from .spaces import Leaf, flatten_value, leaves, space_to_json

_CLOSE = object()
_DISCARD = object()
MAX_DEFER_S = 0.05
"""Longest the writer waits for an idle caller before working anyway (see caller_busy)."""
_DEFER_MAX_BACKLOG = 4  # items queued behind this one: then the writer works regardless


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
        """Append one row; ``None`` means the fill value."""
        if self.big:
            if self.rows >= self.capacity:
                self.capacity = max(64, self.capacity * 2)
                self.dset.resize(self.capacity, axis=0)
            arr = np.full(self.shape, self.fill, self.dtype) if value is None else value
            arr = np.ascontiguousarray(arr, dtype=self.dtype)
            if arr.shape != self.shape:
                raise ValueError(f"expected shape {self.shape}, got {arr.shape}")
            data = zlib.compress(arr.tobytes(), _h5.DEFLATE_LEVEL)
            self.dset.id.write_direct_chunk((self.rows,) + (0,) * len(self.shape), data)
        else:
            self.pending.append(value)
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


def _flatten_info(info: dict, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in info.items():
        name = f"{prefix}{str(key).replace('/', '_')}"
        if isinstance(value, dict) and value:
            out.update(_flatten_info(value, name + "/"))
        else:
            out[name] = value
    return out


class _Infos:
    """Info columns created as keys appear; missing values are filled and marked absent."""

    def __init__(self, file: h5py.File):
        self.file = file
        self.columns: dict[str, _Column] = {}
        self.present: dict[str, _Column] = {}
        self.rows = 0

    def append(self, info: dict) -> None:
        flat = _flatten_info(info or {})
        for name, value in flat.items():
            arr = _numeric_leaf(value)
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


class EpisodeWriter:
    """Writes one episode. Call :meth:`reset` once, :meth:`step` per step, then :meth:`close`
    (keep) or :meth:`discard` (delete). Usable as a context manager (closes on success,
    keeps what was written as truncated on error)."""

    def __init__(
        self,
        path: str | os.PathLike,
        observation_space: gym_spaces.Space,
        action_space: gym_spaces.Space,
        attrs: dict[str, Any] | None = None,
        *,
        record_frames: bool = True,
        queue_size: int = 256,
        flush_interval: float = 1.0,
    ):
        path = Path(path)
        if not path.name.endswith(SUFFIX):
            raise ValueError(f"{path}: expected a file name ending in {SUFFIX}")
        self.path = path
        self.partial_path = path.with_name(path.name[: -len(SUFFIX)] + PARTIAL_SUFFIX)
        self.observation_space = observation_space
        self.action_space = action_space
        self.record_frames = record_frames
        self.flush_interval = flush_interval
        self.blocked_puts = 0
        self.steps = 0
        self.total_return = 0.0
        self._obs_leaves = leaves(observation_space)
        self._act_leaves = leaves(action_space)
        self._attrs = dict(attrs or {})
        self._attrs.pop("actor_names", None)  # the writer's own: see set_actor
        self._actor_names = [
            default_actor(str(self._attrs.get("controller", "")), self._attrs.get("player"))
        ]
        self._actor = 0
        self._queue: queue.Queue = queue.Queue(maxsize=queue_size)
        self._error: BaseException | None = None
        self._closed = False
        self._closing = False
        self._started = False
        self._steps_done = 0  # steps handled by the writer thread
        # Set while the caller is idle (or always, unless it says otherwise): see caller_busy.
        self._caller_idle = threading.Event()
        self._caller_idle.set()
        self._last: tuple[bool, bool] = (False, False)

        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            raise FileExistsError(f"{path}: an episode with this name already exists")
        # Default (earliest) file format: no superblock consistency flags, so a file left open
        # by a crash can still be opened for recovery.
        self._file = h5py.File(self.partial_path, "w")
        base = {
            "format": FORMAT_NAME,
            "schema_version": SCHEMA_VERSION,
            "observation_space": space_to_json(observation_space),
            "action_space": space_to_json(action_space),
            "tags": [],
            "notes": "",
            "recovered": False,
            "flushed_steps": 0,
            "actor_names": self._actor_names,
        }
        _h5.write_attrs(self._file, {**base, **self._attrs})
        self._thread = threading.Thread(
            target=self._run, name=f"episode-writer:{path.name}", daemon=True
        )
        self._thread.start()

    # ---- caller's thread -------------------------------------------------------------------

    def reset(
        self,
        observation: Any,
        info: dict | None = None,
        frame: np.ndarray | None = None,
        timestamp: float | None = None,
    ) -> None:
        if self._started:
            raise RuntimeError(f"{self.path}: reset() called twice on one episode writer")
        self._started = True
        obs = _copy_leaves(self.observation_space, observation)
        self._put(("reset", obs, info, _copy(frame), _now(timestamp)))

    def step(
        self,
        action: Any,
        observation: Any,
        reward: float,
        terminated: bool,
        truncated: bool,
        info: dict | None = None,
        frame: np.ndarray | None = None,
        timestamp: float | None = None,
        keys: Sequence[str] = (),
    ) -> None:
        if not self._started:
            raise RuntimeError(f"{self.path}: step() called before reset()")
        self.steps += 1
        self.total_return += float(reward)
        self._last = (bool(terminated), bool(truncated))
        item = (
            "step",
            _copy_leaves(self.action_space, action),
            _copy_leaves(self.observation_space, observation),
            float(reward),
            bool(terminated),
            bool(truncated),
            info,
            _copy(frame),
            _now(timestamp),
            json.dumps(list(keys)),
            self._actor,
        )
        self._put(item)

    def set_actor(self, name: str) -> None:
        """The steps after this call were taken by ``name`` (``"person:<player>"``,
        ``"policy:<name>"``) until it is called again; the default is the controller."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"expected an actor name like 'person:ann', got {name!r}")
        if name not in self._actor_names:
            if len(self._actor_names) >= MAX_ACTORS:
                raise ValueError(
                    f"{self.path}: expected at most {MAX_ACTORS} actors in one episode, "
                    f"got a new one: {name!r}"
                )
            self._actor_names.append(name)
            self._put(("attrs", {"actor_names": list(self._actor_names)}))
        self._actor = self._actor_names.index(name)

    @property
    def actor(self) -> str:
        """Who takes the next step."""
        return self._actor_names[self._actor]

    @property
    def default_actor(self) -> str:
        """The controller's actor name (index 0 of ``actor_names``)."""
        return self._actor_names[0]

    def set_attrs(self, **attrs: Any) -> None:
        """Set root attributes (written by the writer thread, in order with the steps)."""
        self._put(("attrs", attrs))

    def close(self, *, truncated: bool | None = None, wait: bool = True) -> Path:
        """Finish the episode: flush, fsync, rename to ``.h5``. Returns the final path.

        ``truncated=True`` marks an episode that was cut short by the user. With
        ``wait=False`` the writer thread finishes the file in the background (the caller's
        thread does not wait for the fsync); :meth:`wait` joins it and raises its error."""
        if self._closed or self._closing:
            return self.wait() if wait else self.path
        terminated, trunc = self._last
        if truncated is not None and not terminated:
            trunc = trunc or truncated
        summary = {
            "length": self.steps,
            "total_return": self.total_return,
            "terminated": terminated,
            "truncated": trunc,
        }
        self._put(("attrs", summary))
        self._put(_CLOSE)
        self._closing = True
        self._caller_idle.set()  # finishing the file is never deferred
        if not wait:
            _finish_at_exit(self)
        return self.wait() if wait else self.path

    def caller_busy(self) -> None:
        """The caller starts time-critical work (a game tick): the writer holds off its own
        work (compressing frames) until :meth:`caller_idle`, for at most
        :data:`MAX_DEFER_S`. On a 2-core machine this keeps the deflate of large frames out
        of the game loop's way; a caller that never says anything is never deferred to."""
        self._caller_idle.clear()

    def caller_idle(self) -> None:
        """The caller waits (between game ticks): the writer may work now."""
        self._caller_idle.set()

    def wait(self) -> Path:
        """Wait until a closing episode is on disk under its final name; returns that path."""
        self._finish_thread()
        return self.path

    @property
    def written_steps(self) -> int:
        """Steps the writer thread has handled so far (``steps`` counts those handed over)."""
        return self._steps_done

    @property
    def done(self) -> bool:
        """Whether the writer thread has finished (the file is saved, discarded or failed)."""
        return not self._thread.is_alive()

    def discard(self) -> None:
        """Drop the episode: nothing is left on disk."""
        if self._closed:
            return
        self._put(_DISCARD, check=False)
        self._finish_thread(raise_error=False)
        self.partial_path.unlink(missing_ok=True)

    def __enter__(self) -> EpisodeWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        elif not self._closed:
            try:
                self.close(truncated=True)
            except Exception:  # the original error matters more; the .partial stays
                pass

    @property
    def queue_depth(self) -> int:
        return self._queue.qsize()

    def _put(self, item: Any, check: bool = True) -> None:
        if check and self._error is not None:
            raise EpisodeError(self.partial_path, None, f"writing failed: {self._error}")
        if self._closed or self._closing:
            raise RuntimeError(f"{self.path}: the episode writer is closed")
        try:
            self._queue.put_nowait(item)
        except queue.Full:
            self.blocked_puts += 1
            self._queue.put(item)

    def _finish_thread(self, raise_error: bool = True) -> None:
        self._thread.join()
        self._closed = True
        if raise_error and self._error is not None:
            raise EpisodeError(self.partial_path, None, f"writing failed: {self._error}")

    # ---- writer thread ---------------------------------------------------------------------

    def _run(self) -> None:
        try:
            self._columns_setup()
            last_flush = time.monotonic()
            while True:
                timeout = max(0.0, self.flush_interval - (time.monotonic() - last_flush))
                try:
                    item = self._queue.get(timeout=timeout)
                except queue.Empty:
                    item = None
                if item is _DISCARD:
                    self._file.close()
                    return
                if item is _CLOSE:
                    self._flush()
                    for col in self._all_columns():
                        col.finish()
                    self._file.flush()
                    self._file.close()
                    _h5.fsync_path(self.partial_path)
                    os.replace(self.partial_path, self.path)
                    _h5.fsync_dir(self.path.parent)
                    return
                if item is not None:
                    if self._queue.qsize() < _DEFER_MAX_BACKLOG:  # never defer into a backlog
                        self._caller_idle.wait(MAX_DEFER_S)
                    self._handle(item)
                if time.monotonic() - last_flush >= self.flush_interval:
                    self._flush()
                    last_flush = time.monotonic()
        except BaseException as exc:  # reported to the caller on its next call
            self._error = exc
            try:
                self._file.close()
            except Exception:
                pass
            # Keep draining so a caller blocked on a full queue is released.
            while True:
                item = self._queue.get()
                if item is _CLOSE or item is _DISCARD:
                    return

    def _columns_setup(self) -> None:
        self._obs_cols: list[_Column] | None = None
        self._obs_linked = False
        self._act_cols: list[_Column] | None = None
        self._frames: _Column | None = None
        self._infos = _Infos(self._file)
        f = self._file
        self._rewards = _Column(f, "rewards", (), np.dtype(np.float64))
        self._terms = _Column(f, "terminations", (), np.dtype(bool))
        self._truncs = _Column(f, "truncations", (), np.dtype(bool))
        self._times = _Column(f, "timestamps", (), np.dtype(np.float64))
        self._keys = _Column(f, "keys", (), _h5.TEXT)
        self._actors = _Column(f, "actors", (), np.dtype(np.uint8))
        self._reset_done = False

    def _leaf_columns(self, group: str, specs: list[Leaf]) -> list[_Column]:
        return [
            _Column(
                self._file,
                "/".join((group, *leaf.path)),
                leaf.shape,
                _h5.TEXT if leaf.is_text else np.dtype(leaf.dtype),
            )
            for leaf in specs
        ]

    def _handle(self, item: tuple) -> None:
        kind = item[0]
        if kind == "attrs":
            _h5.write_attrs(self._file, item[1])
        elif kind == "reset":
            _, obs, info, frame, ts = item
            if frame is not None and self.record_frames:
                self._frames = _Column(
                    self._file, "frames", frame.shape, np.dtype(np.uint8), big=True
                )
                self._frames.append(frame)
            if self._frames is not None and _is_frame(obs, frame):
                # Image observations that are the rendered frame (ALE's RGB observations) are
                # stored once: ``observations`` is a hard link to ``frames``.
                self._file["observations"] = self._frames.dset
                self._obs_linked = True
            else:
                self._obs_cols = self._leaf_columns("observations", self._obs_leaves)
                for col, v in zip(self._obs_cols, obs):
                    col.append(v)
            self._infos.append(info or {})
            self._times.append(ts)
            self._reset_done = True
        else:
            _, act, obs, rew, term, trunc, info, frame, ts, keys, actor = item
            if self._act_cols is None:
                self._act_cols = self._leaf_columns("actions", self._act_leaves)
            for col, v in zip(self._act_cols, act):
                col.append(v)
            if self._obs_linked and not _is_frame(obs, frame):
                self._unlink_observations()
            for col, v in zip(self._obs_cols or [], obs):
                col.append(v)
            if self._frames is not None:
                self._frames.append(frame)
            self._rewards.append(rew)
            self._terms.append(term)
            self._truncs.append(trunc)
            self._infos.append(info or {})
            self._times.append(ts)
            self._keys.append(keys)
            self._actors.append(actor)
            self._steps_done += 1

    def _unlink_observations(self) -> None:
        """An observation differed from its frame: give observations their own dataset,
        starting with copies of the frames so far."""
        assert self._frames is not None
        del self._file["observations"]
        self._obs_linked = False
        self._obs_cols = self._leaf_columns("observations", self._obs_leaves)
        for i in range(self._frames.rows):
            self._obs_cols[0].append(self._frames.dset[i])

    def _all_columns(self) -> list[_Column]:
        cols = [self._rewards, self._terms, self._truncs, self._times, self._keys, self._actors]
        cols += self._obs_cols or []
        cols += self._act_cols or []
        if self._frames is not None:
            cols.append(self._frames)
        return cols + self._infos.all_columns()

    def _flush(self) -> None:
        for col in self._all_columns():
            col.flush()
        self._file.attrs["flushed_steps"] = _h5.to_json(
            self._steps_done if self._reset_done else -1
        )
        self._file.flush()


_closing_in_background: weakref.WeakSet[EpisodeWriter] = weakref.WeakSet()
_exit_hook_registered = False


def _finish_at_exit(writer: EpisodeWriter) -> None:
    """Make interpreter exit wait for episodes that are being closed in the background (the
    writer threads are daemons, so an abandoned open episode never blocks exit)."""
    global _exit_hook_registered
    _closing_in_background.add(writer)
    if not _exit_hook_registered:
        atexit.register(lambda: [w._thread.join() for w in list(_closing_in_background)])
        _exit_hook_registered = True


def _is_frame(obs: list[Any], frame: np.ndarray | None) -> bool:
    """Whether a single-leaf observation is exactly the rendered frame."""
    if frame is None or len(obs) != 1 or not isinstance(obs[0], np.ndarray):
        return False
    o = obs[0]
    return o.dtype == np.uint8 and o.shape == frame.shape and np.array_equal(o, frame)


def _copy_leaves(space: gym_spaces.Space, value: Any) -> list[Any]:
    """The leaf values of ``value``, copied (envs may reuse their buffers); text as ``str``."""
    return [
        str(v) if isinstance(v, (str, np.str_)) else np.array(v)
        for v in flatten_value(space, value)
    ]


def _copy(frame: np.ndarray | None) -> np.ndarray | None:
    return None if frame is None else np.array(frame, dtype=np.uint8, copy=True)


def _now(timestamp: float | None) -> float:
    return time.time() if timestamp is None else float(timestamp)

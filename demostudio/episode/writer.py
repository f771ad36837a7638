"""Crash-safe, streaming episode writer.

The caller's thread only copies arrays and puts them on a bounded queue; a writer thread
(:mod:`.writer_thread`) deflates big values (frames, image observations) once, appends each
item to the journal (``<name>.h5.journal``, see :mod:`.journal`) and hands it to the HDF5
sink (:mod:`._sink`), which writes big values one chunk each and buffers small ones in
blocks. The file is ``<name>.h5.partial`` until :meth:`close`, which flushes, fsyncs and
renames it to ``<name>.h5`` and deletes the journal; after a crash, :mod:`.recover` rebuilds
the episode from the journal. The queue blocks rather than drops;
:attr:`EpisodeWriter.blocked_puts` counts how often it had to.

A write that fails (a full disk) stops the writer thread, whichever item it was handling:
it lets go of both files, keeping them for :mod:`.recover`, and only then publishes the
error, which the caller gets as one :class:`EpisodeError` line on its next call, or from
:meth:`EpisodeWriter.close` / :meth:`EpisodeWriter.wait`. A caller waiting for room in the
queue also watches for the thread's end, so it never waits on a thread that has stopped. At
interpreter exit, writer threads still running are stopped and waited for: a daemon thread
frozen inside h5py holds h5py's lock, and the interpreter's own clean-up then waits for it
forever.
"""

from __future__ import annotations

import json
import os
import queue
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces as gym_spaces

from . import _h5
from ._sink import EpisodeSink
from .actors import MAX_ACTORS, default_actor
from .journal import JOURNAL_SUFFIX, Journal
from .schema import FORMAT_NAME, PARTIAL_SUFFIX, SCHEMA_VERSION, SUFFIX, EpisodeError
from .spaces import flatten_value, space_to_json
from .writer_thread import CLOSE, DISCARD, MAX_DEFER_S, POLL_S, WriterThread, watch_at_exit


class EpisodeWriter(WriterThread):
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
        self.journal_path = path.with_name(path.name[: -len(SUFFIX)] + JOURNAL_SUFFIX)
        self.observation_space = observation_space
        self.action_space = action_space
        self.record_frames = record_frames
        self.flush_interval = flush_interval
        self.blocked_puts = 0
        self.steps = 0
        self.total_return = 0.0
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
        self._reset_journalled = threading.Event()
        self._stop = threading.Event()  # interpreter exit: see _at_exit
        # Set when the writer thread is done. Waited on instead of Thread.join: a join that a
        # signal interrupts (Ctrl-C, SIGTERM) marks the thread as ended while it still runs
        # (CPython 3.11), and exit would then not wait for it.
        self._finished = threading.Event()
        self._last: tuple[bool, bool] = (False, False)

        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # a file where a folder goes (--out FILE)
            raise EpisodeError(
                path.parent,
                None,
                f"expected a folder for the episodes, cannot make it ({exc.strerror or exc})",
            ) from None
        if path.exists():
            raise FileExistsError(f"{path}: an episode with this name already exists")
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
        attrs_text = {k: _h5.to_json(v) for k, v in {**base, **self._attrs}.items()}
        # The HDF5 file and the journal beside it are readable from here on: a crash at any
        # later instant leaves a .partial that recovers (see journal.py). Nothing of the
        # episode is in them before that, so a failure to make them removes both.
        try:
            self._sink = EpisodeSink(self.partial_path, observation_space, action_space, attrs_text)
        except BaseException as exc:
            self.partial_path.unlink(missing_ok=True)
            raise _cannot_make(exc, self.partial_path) from None
        try:
            self._journal = Journal(self.journal_path)
            self._journal.append({"kind": "attrs", "attrs": attrs_text})
        except BaseException as exc:
            self._sink.abandon()
            self.partial_path.unlink(missing_ok=True)
            self.journal_path.unlink(missing_ok=True)
            raise _cannot_make(exc, self.journal_path) from None
        self._thread = threading.Thread(
            target=self._run, name=f"episode-writer:{path.name}", daemon=True
        )
        self._thread.start()
        watch_at_exit(self)

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
        # Wait (once per episode, about a millisecond) until the reset is in the journal: from
        # then on a kill leaves an episode that recovers, with every step journalled so far.
        while not self._reset_journalled.wait(0.05):
            if self._error is not None or self._finished.is_set():
                break

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
        self._put(CLOSE)
        self._closing = True
        self._caller_idle.set()  # finishing the file is never deferred
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
        return self._finished.is_set()

    def discard(self) -> None:
        """Drop the episode: nothing is left on disk (one already saved stays)."""
        if self._closed and self._error is None:
            return
        if not self._closed:
            self._put(DISCARD, check=False)
            self._finish_thread(raise_error=False)
        self.partial_path.unlink(missing_ok=True)
        self.journal_path.unlink(missing_ok=True)

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

    def _put(self, item: Any, check: bool = True) -> None:
        if check and self._error is not None:
            self._finish_thread()  # raises the error
        if self._closed or self._closing:
            raise RuntimeError(f"{self.path}: the episode writer is closed")
        try:
            self._queue.put_nowait(item)
            return
        except queue.Full:
            self.blocked_puts += 1
        while True:  # a thread that failed or stopped takes nothing more: never wait for it
            try:
                self._queue.put(item, timeout=POLL_S)
                return
            except queue.Full:
                if self._finished.is_set():
                    break
        if check:
            self._finish_thread()
            raise RuntimeError(f"{self.path}: the episode writer stopped")

    def _finish_thread(self, raise_error: bool = True) -> None:
        self._finished.wait()
        self._closed = True
        if raise_error and self._error is not None:
            raise self._failure() from None

    def _failure(self) -> EpisodeError:
        """The writer thread's error as one line naming the file and what is kept."""
        return EpisodeError(
            self.partial_path,
            None,
            f"cannot write it ({_h5.failure_reason(self._error)}); what was recorded is kept "
            f"in it and {self.journal_path.name}: make room, then run "
            f"`demostudio recover {self.path.parent}`",
        )


def _cannot_make(exc: BaseException, path: Path) -> BaseException:
    """The disk's error behind ``exc`` as the OS words it, naming ``path`` (h5py's message
    runs over several lines and names the file only inside its text; a failed flush is a
    RuntimeError), else ``exc`` itself."""
    number = _h5.os_errno(exc)
    return OSError(number, os.strerror(number), str(path)) if number else exc


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


__all__ = ["MAX_DEFER_S", "EpisodeWriter"]

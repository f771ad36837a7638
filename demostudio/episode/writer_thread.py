"""The writer thread of an episode writer (:class:`.writer.EpisodeWriter` is the caller's
side): it takes the queued items in order, deflates big values (waiting, for at most
:data:`MAX_DEFER_S`, while the caller says it is busy), appends each item to the journal
first and then hands it to the HDF5 sink, flushing both every ``flush_interval`` seconds;
it finishes the file on close, deletes it on discard, and at interpreter exit leaves the
``.partial`` and the journal for recover (:func:`watch_at_exit`). An error in any of it is
kept for the caller, who gets it on its next call."""

from __future__ import annotations

import atexit
import os
import queue
import threading
import time
import weakref
from pathlib import Path

from . import _h5
from ._sink import EpisodeSink, record_of
from .journal import Journal

CLOSE = object()
DISCARD = object()
_STOP = object()  # interpreter exit: keep what is written for recover, leave HDF5 alone
MAX_DEFER_S = 0.05
"""Longest the writer waits for an idle caller before working anyway (see caller_busy)."""
_DEFER_MAX_BACKLOG = 4  # items queued behind this one: then the writer works regardless
POLL_S = 0.1  # how often a caller waiting on the writer thread checks that it still runs
EXIT_WAIT_S = 5.0
"""Longest interpreter exit waits for the threads of episodes left open (see _at_exit)."""


class WriterThread:
    """The writer thread's side of an episode writer: :meth:`_run` is the thread's body. The
    state below is shared with the caller's side, which makes it."""

    path: Path
    partial_path: Path
    record_frames: bool
    flush_interval: float
    _queue: queue.Queue
    _sink: EpisodeSink
    _journal: Journal
    _error: BaseException | None
    _closing: bool
    _steps_done: int
    _caller_idle: threading.Event
    """Set while the caller is idle (or always, unless it says otherwise): see caller_busy."""
    _reset_journalled: threading.Event
    _stop: threading.Event
    """Interpreter exit: see _at_exit."""
    _finished: threading.Event
    """Set when the writer thread is done."""

    def _run(self) -> None:
        try:
            self._work()
        except BaseException as exc:  # reported to the caller on its next call
            self._sink.abandon()
            try:
                self._journal.close()
            except OSError:
                pass
            while True:  # what is queued will never be written: free its memory
                try:
                    self._queue.get_nowait()
                except queue.Empty:
                    break
            self._error = exc  # last: the caller never goes on while this thread is in HDF5
        finally:
            self._finished.set()

    def _work(self) -> None:
        last_flush = time.monotonic()
        while True:
            timeout = max(0.0, self.flush_interval - (time.monotonic() - last_flush))
            if self._stop.is_set():
                timeout = min(timeout, POLL_S)
            try:
                item = self._queue.get(timeout=timeout)
            except queue.Empty:
                item = None
            if item is _STOP or (item is None and self._stop.is_set()):
                self._sink.flush()  # then closing writes nothing more (see _h5.let_go)
                self._sink.close()  # the .partial and the journal stay for recover
                self._journal.close()
                return
            if item is DISCARD:
                self._sink.abandon()
                self._journal.delete()
                return
            if item is CLOSE:
                self._sink.finish()
                _h5.fsync_path(self.partial_path)
                os.replace(self.partial_path, self.path)
                _h5.fsync_dir(self.path.parent)
                self._journal.delete()  # the episode is safe under its final name
                return
            if item is not None:
                # Never defer into a backlog, nor the reset (the caller waits for it); without
                # one, frames are deflated harder (smaller files, in this thread's spare time).
                keeping_up = self._queue.qsize() < _DEFER_MAX_BACKLOG
                if keeping_up and item[0] != "reset":
                    self._caller_idle.wait(MAX_DEFER_S)
                record = record_of(item, self.record_frames, keeping_up)
                self._journal.append(record)  # first: it is what survives a crash
                if item[0] == "reset":
                    self._reset_journalled.set()
                self._sink.handle(record)
                self._steps_done = self._sink.steps
            if time.monotonic() - last_flush >= self.flush_interval:
                self._sink.flush()
                self._journal.sync()
                last_flush = time.monotonic()


_writers: weakref.WeakSet[WriterThread] = weakref.WeakSet()
_exit_hook_registered = False


def watch_at_exit(writer: WriterThread) -> None:
    global _exit_hook_registered
    _writers.add(writer)
    if not _exit_hook_registered:
        atexit.register(_at_exit)  # after h5py's import: runs before h5py's own hook
        _exit_hook_registered = True


def _at_exit() -> None:
    """Interpreter exit waits for episodes being closed in the background, and stops the
    threads of episodes left open (their .partial and journal stay for recover), waiting
    for them at most :data:`EXIT_WAIT_S`: the threads are daemons, and one frozen inside
    h5py at exit holds h5py's lock, on which the interpreter's clean-up then waits forever
    (or HDF5 crashes)."""
    running = [w for w in list(_writers) if not w._finished.is_set()]
    for writer in running:
        if not writer._closing:
            writer._stop.set()
            try:
                writer._queue.put_nowait(_STOP)
            except queue.Full:
                pass  # the thread sees _stop once it has written what is queued
    deadline = time.monotonic() + EXIT_WAIT_S
    for writer in running:
        if writer._closing:
            writer._finished.wait()
        else:
            writer._finished.wait(max(0.0, deadline - time.monotonic()))


__all__ = [
    "CLOSE",
    "DISCARD",
    "EXIT_WAIT_S",
    "MAX_DEFER_S",
    "POLL_S",
    "WriterThread",
    "watch_at_exit",
]

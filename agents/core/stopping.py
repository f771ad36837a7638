"""How a run is stopped: Ctrl-C (SIGINT), ``kill`` (SIGTERM) and a closed terminal or a
dropped ssh session (SIGHUP) all end it the same way, as KeyboardInterrupt in the main
thread, which the run shell turns into ``checkpoints/final.pt`` marked interrupted, an
``interrupted`` row in metrics.jsonl and :class:`RunInterrupted` (the command prints how to
resume and exits with 128 + the signal's number: 130, 143, 129).

The first stop signal raises; a later SIGTERM or SIGHUP is ignored while the run saves (a
closing terminal sends SIGHUP, a service manager SIGTERM again), a second Ctrl-C still stops
at once. A signal the process was started ignoring (``nohup``: SIGHUP) stays ignored. A run in
another thread (coach's trainer) cannot receive signals: the main thread asks it to stop with
:func:`request_stop` and the run shell raises at its next iteration (:func:`check_stop`).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class StopSignal(KeyboardInterrupt):
    """A stop signal received: KeyboardInterrupt, so everything that handles Ctrl-C handles it."""

    def __init__(self, signum: int = signal.SIGINT):
        super().__init__(signal_name(signum))
        self.signum = int(signum)

    def __reduce__(self):  # crosses processes (compare's workers) with its signal
        return (type(self), (self.signum,))


class RunInterrupted(KeyboardInterrupt):
    """A stop signal during a run: its state was saved to ``checkpoints/final.pt``, marked
    ``interrupted`` (``--resume`` continues it), and metrics.jsonl ends with an
    ``interrupted`` row."""

    def __init__(self, run_dir: Path, env_steps: int, signum: int = signal.SIGINT):
        super().__init__(f"{run_dir}: interrupted at {env_steps} env steps")
        self.run_dir = Path(run_dir)
        self.env_steps = int(env_steps)
        self.signum = int(signum)

    def __reduce__(self):
        return (type(self), (self.run_dir, self.env_steps, self.signum))


def signal_name(signum: int) -> str:
    return signal.Signals(signum).name


def stop_signum(stop: BaseException) -> int:
    """The signal that raised ``stop`` (SIGINT for a plain KeyboardInterrupt)."""
    return int(getattr(stop, "signum", signal.SIGINT))


def exit_status(stop: BaseException) -> int:
    """The exit status of a command stopped by ``stop``: 128 + its signal (130 for Ctrl-C)."""
    return 128 + stop_signum(stop)


_lock = threading.Lock()
_installed: dict[int, object] = {}
"""The handlers ours replaced, while :func:`stop_signals` is active (empty: not active)."""
_fired: list[int] = []
"""The stop signal received while active (at most one), or :data:`_HOLD` while a run writes
its final checkpoint (:func:`finishing`)."""
_HOLD = 0
_requested = threading.Event()
_requested_signum = [int(signal.SIGINT)]


def _silence_hung_up_terminal() -> None:
    """After SIGHUP, stdout and stderr on the terminal that hung up fail every write (EIO,
    even an empty one): they go to /dev/null so that saving is not stopped by a progress bar
    or a message nobody can see. Output to a file or a pipe stays."""
    for fd in (1, 2):
        try:
            os.write(fd, b"")  # a file or a pipe takes it (a hung-up terminal no longer
        except OSError:  # says it is one)
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, fd)
            os.close(null)


def _handler(signum: int, frame: object) -> None:
    if _fired == [_HOLD] and not _requested.is_set():
        request_stop(signum)  # the first stop, as a run writes its end: kept for what follows
        return
    if _fired:
        if signum == signal.SIGINT:
            raise KeyboardInterrupt  # Ctrl-C again: stop now, even while saving
        return
    _fired.append(signum)
    if signum == signal.SIGHUP:
        _silence_hung_up_terminal()
    raise StopSignal(signum)


@contextlib.contextmanager
def stop_signals() -> Iterator[None]:
    """Stop signals raise :class:`StopSignal` in the main thread while the block runs (nested
    uses and other threads: as the outermost one set them); the handlers before are restored
    after."""
    if threading.current_thread() is not threading.main_thread() or _installed:
        yield
        return
    for signum in STOP_SIGNALS:
        before = signal.getsignal(signum)
        if before is not signal.SIG_IGN:
            _installed[signum] = before
            signal.signal(signum, _handler)
    try:
        yield
    finally:
        for signum, before in _installed.items():  # None: a handler set outside Python
            signal.signal(signum, signal.SIG_DFL if before is None else before)  # type: ignore[arg-type]
        _installed.clear()
        _fired.clear()
        _requested.clear()


@contextlib.contextmanager
def keep_stop_handlers() -> Iterator[None]:
    """Around a library call that sets its own handlers (``ray.init`` makes SIGTERM exit
    the process before the run could save): ours are set again after it."""
    try:
        yield
    finally:
        if _installed and threading.current_thread() is threading.main_thread():
            for signum in _installed:
                signal.signal(signum, _handler)


@contextlib.contextmanager
def finishing() -> Iterator[None]:
    """While a run writes its final checkpoint and logs: a first stop signal does not cut
    them short; it becomes a stop request (:func:`check_stop`) for what comes next (compare's
    next run). Inside an interrupted run's end, as after any stop: a second Ctrl-C stops at
    once, SIGTERM and SIGHUP are ignored."""
    held = not _fired and threading.current_thread() is threading.main_thread()
    if held:  # (a run in another thread is not interrupted by signals at all)
        _fired.append(_HOLD)
    try:
        yield
    finally:
        if held:
            _fired.clear()


def request_stop(signum: int = signal.SIGINT) -> None:
    """Ask a run in another thread to stop as if it had received ``signum``."""
    with _lock:
        _requested_signum[0] = int(signum)
        _requested.set()


def check_stop() -> None:
    """Raise :class:`StopSignal` when :func:`request_stop` asked this run to stop."""
    if _requested.is_set():
        raise StopSignal(_requested_signum[0])


def stop_children() -> None:
    """Pass a stop on to the processes this one started with multiprocessing (a terminal's
    Ctrl-C reaches them itself, a ``kill`` of this process does not): SIGTERM, which stops
    a run in them as here; one that is already stopping ignores it."""
    for child in multiprocessing.active_children():
        if child.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child.pid, signal.SIGTERM)


__all__ = [
    "STOP_SIGNALS",
    "RunInterrupted",
    "StopSignal",
    "check_stop",
    "exit_status",
    "finishing",
    "keep_stop_handlers",
    "request_stop",
    "signal_name",
    "stop_children",
    "stop_signals",
    "stop_signum",
]

"""A full disk, in process: the episode writer's writes fail as a full disk fails them.

:class:`DiskFull` patches the seams where the writer and recovery touch the disk and, from the
``at``-th call of one of them on, makes every one of them fail with ENOSPC, the way h5py and
the OS raise it (a full disk stays full), until :meth:`DiskFull.space_back`:

=============  ===========================================  ================================
point          seam                                         raises (as the real layer does)
=============  ===========================================  ================================
create         ``EpisodeSink.__init__`` (a new .h5 file)    OSError 28, h5py's long message
write          ``EpisodeSink.handle`` (a chunk, a row)      OSError 28, h5py's long message
flush          ``EpisodeSink.flush`` (first, later, final)  RuntimeError, "errno = 28" inside
journal        ``Journal._write`` (a record)                half the record, then OSError 28
journal-sync   ``Journal.sync`` (fdatasync)                 OSError 28
finish         ``EpisodeSink.finish`` (the final flush)     RuntimeError, "errno = 28" inside
fsync          ``_h5.fsync_path`` of an episode file        OSError 28 naming the file
rename         ``os.replace`` of a .partial / .recovering   OSError 28 naming both files
=============  ===========================================  ================================

Counting starts when the fault is installed (:meth:`DiskFull.install`), so a test installs
it at the moment it means ("the first flush of the second episode"). The benchmark and the
command-line tests install it in a child process through :func:`child_main`.
"""

from __future__ import annotations

import errno
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from demostudio.episode import _h5, _sink, journal

POINTS = ("create", "write", "flush", "journal", "journal-sync", "finish", "fsync", "rename")
NO_SPACE = os.strerror(errno.ENOSPC)
_OURS = (".h5.partial", ".h5.partial.recovering", ".recovering")


def _h5py_text(what: str, path: object) -> str:
    """h5py's message for a failed write: several lines, the file named inside the text."""
    return (
        f"{what} (file write failed: time = {time.ctime()}\n, filename = '{path}', "
        f"file descriptor = 4, errno = 28, error message = '{NO_SPACE}', buf = 0x7f00, "
        "total write size = 830, bytes this sub-write = 830, offset = 81920)"
    )


class DiskFull:
    """The disk fills up at call ``at`` (1: the first) of seam ``point``."""

    def __init__(self, point: str, at: int = 1):
        if point not in POINTS:
            raise ValueError(f"expected a point in {POINTS}, got {point!r}")
        self.point = point
        self.at = at
        self.calls = 0
        self.full = False
        self.failures = 0
        self._saved: list[tuple[Any, str, Any]] = []

    # ---- the switch --------------------------------------------------------------------------

    def _hit(self, point: str) -> bool:
        """Whether this call of ``point`` fails (and the disk is full from now on)."""
        if not self.full and point == self.point:
            self.calls += 1
            if self.calls >= self.at:
                self.full = True
        if self.full:
            self.failures += 1
        return self.full

    def space_back(self) -> None:
        """Room again: nothing fails any more (the patches stay)."""
        self.full = False
        self.point = ""

    # ---- the seams ---------------------------------------------------------------------------

    def install(self) -> DiskFull:
        sink, journal_cls = _sink.EpisodeSink, journal.Journal
        init, handle, flush, finish = sink.__init__, sink.handle, sink.flush, sink.finish
        write, sync = journal_cls._write, journal_cls.sync
        fsync_path, replace = _h5.fsync_path, os.replace
        disk = self

        def new_init(self, path, *args, **kwargs):
            if disk._hit("create"):
                Path(path).touch()  # HDF5 creates the file, then fails writing its superblock
                raise OSError(errno.ENOSPC, _h5py_text("Unable to synchronously create file", path))
            init(self, path, *args, **kwargs)

        def new_handle(self, item):
            if disk._hit("write"):
                raise OSError(
                    errno.ENOSPC,
                    _h5py_text("Can't write unprocessed chunk data", self.file.filename),
                )
            handle(self, item)

        def new_flush(self):
            if disk._hit("flush"):
                raise RuntimeError(_h5py_text("Unable to flush raw data", self.file.filename))
            flush(self)

        def new_finish(self):
            if disk._hit("finish"):
                raise RuntimeError(_h5py_text("Unable to flush raw data", self.file.filename))
            finish(self)

        def new_write(self, data):
            if disk._hit("journal"):
                half = memoryview(data)[: len(data) // 2]
                if half:
                    os.write(self._fd, half)  # a torn record, as a short write leaves it
                raise OSError(errno.ENOSPC, NO_SPACE)
            write(self, data)

        def new_sync(self):
            if disk._hit("journal-sync"):
                raise OSError(errno.ENOSPC, NO_SPACE)
            sync(self)

        def new_fsync_path(path):
            if str(path).endswith(_OURS) and disk._hit("fsync"):
                raise OSError(errno.ENOSPC, NO_SPACE, str(path))
            fsync_path(path)

        def new_replace(src, dst, **kwargs):
            if str(src).endswith(_OURS) and disk._hit("rename"):
                raise OSError(errno.ENOSPC, NO_SPACE, str(src), None, str(dst))
            replace(src, dst, **kwargs)

        for owner, name, value in (
            (sink, "__init__", new_init),
            (sink, "handle", new_handle),
            (sink, "flush", new_flush),
            (sink, "finish", new_finish),
            (journal_cls, "_write", new_write),
            (journal_cls, "sync", new_sync),
            (_h5, "fsync_path", new_fsync_path),
            (os, "replace", new_replace),
        ):
            self._saved.append((owner, name, getattr(owner, name)))
            setattr(owner, name, value)
        return self

    def uninstall(self) -> None:
        for owner, name, value in reversed(self._saved):
            setattr(owner, name, value)
        self._saved.clear()

    def __enter__(self) -> DiskFull:
        return self.install()

    def __exit__(self, *exc: object) -> None:
        self.uninstall()


PERIODIC_FLUSH_S = 0.05
"""The writer's flush interval in a child filling the disk at ``flush`` or ``journal-sync``:
short enough that periodic flushes (and journal syncs) happen within CartPole's episodes of
a fraction of a second, not only the flushes that make and finish a file."""


def child_main(argv: Sequence[str], main: Callable[[list[str]], int] | None = None) -> int:
    """``POINT AT -- demostudio ARGS...``: run the command line with the disk filling up at
    call AT of POINT (``none``: never). For a child process (the benchmark, the CLI tests)."""
    point, at, sep, *args = argv
    assert sep == "--", argv
    if point in ("flush", "journal-sync"):
        from demostudio.episode.writer import EpisodeWriter

        EpisodeWriter.__init__.__kwdefaults__["flush_interval"] = PERIODIC_FLUSH_S
    if point != "none":
        DiskFull(point, int(at)).install()
    if main is None:
        from demostudio.cli import main
    return main(args)


if __name__ == "__main__":
    sys.exit(child_main(sys.argv[1:]))

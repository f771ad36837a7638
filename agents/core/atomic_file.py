"""Writing a file atomically: a kill, a crash or a full disk at any moment leaves either the
previous file whole or the new one whole under its name, never half of one."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path: Path, write: Any) -> Path:
    """``write(file)`` into ``path`` atomically: temp file, flush, fsync, rename, fsync dir.

    A failure at any point (a full disk) removes the temp file and leaves the file at
    ``path`` as it was; the disk's error is raised naming ``path`` (torch and numpy write
    through a file object, so theirs name no file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.errno:
            raise OSError(exc.errno, os.strerror(exc.errno), str(path)) from None
        raise
    _fsync_dir(path.parent)
    return path

"""Small h5py helpers shared by the writer, the reader and recovery (the only h5py users)."""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import re
from pathlib import Path
from typing import Any

import h5py
import numpy as np

TEXT = h5py.string_dtype("utf-8")
# Values of at least this many bytes get one chunk each, compressed (frames, image obs).
BIG_VALUE_BYTES = 4096
SMALL_CHUNK_ROWS = 1024
DEFLATE_LEVEL = 1
"""The level every deflated chunk has at least (the frames' filter says it; ``compact`` goes
on from there)."""
DEFLATE_BEST = 9
BEST_MAX_BYTES = 256 * 1024
"""Frames up to this size are deflated at :data:`DEFLATE_BEST` by a writer that keeps up: an
Atari frame (98 KiB) then takes 0.45 KB on disk instead of 1.5 KB for about 1.7 ms of the
writer thread's time (zlib releases the GIL, so not the game loop's), a 256x256 grid render
3.6 ms; a 600x400 classic-control render would take 9-23 ms a frame and stays at level 1."""


def deflate_level(nbytes: int, keeping_up: bool) -> int:
    """The level a big value of ``nbytes`` is deflated at while recording."""
    return DEFLATE_BEST if keeping_up and nbytes <= BEST_MAX_BYTES else DEFLATE_LEVEL


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    return repr(obj)


def _finite(obj: Any) -> Any:
    """JSON has no NaN / infinity: spell them as strings."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    if isinstance(obj, dict):
        return {str(k): _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def to_json(value: Any) -> str:
    """Strict JSON text of ``value`` (numpy scalars/arrays converted, other objects repr'd)."""
    plain = json.loads(json.dumps(value, default=_json_default))
    return json.dumps(_finite(plain), allow_nan=False)


def write_attrs(obj: h5py.HLObject, attrs: dict[str, Any]) -> None:
    for key, value in attrs.items():
        obj.attrs[key] = to_json(value)


def fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(path: Path) -> None:
    try:
        fsync_path(path)
    except OSError:  # some filesystems cannot fsync a directory; the rename still happened
        pass


CANNOT_WRITE_ERRNOS = frozenset(
    {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM}
)
"""Errors of the disk, not of a file: no room, a quota, a read-only disk, no permission."""

_ERRNO_IN_MESSAGE = re.compile(r"\berrno = (\d+)")


def os_errno(exc: BaseException) -> int | None:
    """The OS error number behind ``exc``: an OSError's, or the one h5py writes into its
    message ("errno = 28": a failed flush is a RuntimeError without ``errno``), looking
    through the exceptions it was raised from. None when there is none."""
    seen = 0
    current: BaseException | None = exc
    while current is not None and seen < 8:
        if isinstance(current, OSError) and current.errno:
            return current.errno
        found = _ERRNO_IN_MESSAGE.search(str(current))
        if found:
            return int(found.group(1))
        current = current.__cause__ or current.__context__
        seen += 1
    return None


def failure_reason(exc: BaseException) -> str:
    """Why a write failed, in one line: the OS's words for its error number ("No space left
    on device"; h5py's own message runs over lines with a timestamp and buffer addresses),
    else the first line of the message."""
    number = os_errno(exc)
    if number is not None:
        return os.strerror(number)
    lines = str(exc).strip().splitlines()
    return lines[0][:200] if lines else type(exc).__name__


def let_go(file: h5py.File) -> None:
    """Close ``file`` after one of its writes failed, without letting HDF5 write to the disk
    again: a try to save what it holds, then its descriptor is pointed at the null device and
    it is closed. HDF5 keeps a file whose close failed (on a full disk) half open, and
    closing that again when the interpreter exits crashes the process. The file on disk
    stays as its last successful write left it: the journal beside it holds the rest."""
    if not file.id.valid:
        return
    with contextlib.suppress(Exception):
        file.flush()  # a failed flush leaves HDF5 whole (a failed close does not)
    with contextlib.suppress(Exception):
        handle = file.id.get_vfd_handle()
        null = os.open(os.devnull, os.O_RDWR)
        try:
            os.dup2(null, handle)
        finally:
            os.close(null)
    with contextlib.suppress(Exception):
        file.close()


def is_big(shape: tuple[int, ...], dtype: np.dtype) -> bool:
    return dtype != TEXT and int(np.prod(shape, dtype=np.int64)) * dtype.itemsize >= BIG_VALUE_BYTES


def fill_value_for(dtype: np.dtype) -> Any:
    if dtype.kind == "f":
        return np.nan
    if dtype.kind == "b":
        return False
    return 0

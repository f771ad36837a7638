"""Reading episode files as hostile input: the checks every reader goes through.

A file is looked at before HDF5 reads anything in it that could hang or allocate without bound
(a global heap collection HDF5 would walk forever, a variable-length value of more than 16 MB
that HDF5 would read whole to learn its size); its links are looked at before anything is
opened through them (only plain hard links inside the file: an external or soft link is never
followed); datasets must keep their data in this file (no external raw storage, no virtual
dataset), use no filter but gzip, and declare no more than their stored chunks hold, so a small
file cannot make a reader allocate gigabytes; declared shapes are checked against the schema and
the episode length before any array is read; rows stored one gzip chunk each are inflated with
their size bounded. Every failure is one :class:`EpisodeError` naming the file and the field.
"""

from __future__ import annotations

import math
import os
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from .declared import MAX_FRAME_SIDE, check_declared
from .file_checks import HDF5_SIGNATURE, not_a_regular_file, output_file_problem
from .rows import read_rows
from .schema import LENGTH_OFFSETS, EpisodeError

__all__ = [
    "ALLOWED_FILTERS",
    "GLOBAL_HEAP",
    "HDF5_SIGNATURE",
    "MAX_CHUNK_BYTES",
    "MAX_DEPTH",
    "MAX_FRAME_SIDE",
    "MAX_HEAP_OBJECT_BYTES",
    "MAX_OBJECTS",
    "READ_ERRORS",
    "SCAN_CHUNK_BYTES",
    "UNSTORED_BYTES",
    "check_declared",
    "checked_datasets",
    "damaged",
    "describe_link",
    "global_heap_problem",
    "guard",
    "hard_linked",
    "not_a_regular_file",
    "open_h5",
    "output_file_problem",
    "read_rows",
    "short_error",
]


MAX_DEPTH = 16
"""Deepest group nesting accepted (hard-linked group cycles end here)."""
MAX_OBJECTS = 100_000
"""Most datasets and groups accepted in one file."""
MAX_CHUNK_BYTES = 64 * 1024 * 1024
"""Largest chunk accepted (a frame is 100 KB; a whole block of small rows 64 KB)."""
UNSTORED_BYTES = 128 * 1024 * 1024
"""Declared bytes a file may have beyond its stored chunks (fill values of late info keys)."""
ALLOWED_FILTERS = {h5py.h5z.FILTER_DEFLATE: "gzip"}
READ_ERRORS = (OSError, RuntimeError, KeyError, ValueError, TypeError, IndexError, OverflowError)
"""What h5py raises for a damaged file."""


def short_error(exc: BaseException) -> str:
    """An h5py / json error as one short line."""
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:200]


def describe_link(link: Any) -> str:
    if isinstance(link, h5py.SoftLink):
        return f"a soft link to {link.path!r}"
    if isinstance(link, h5py.ExternalLink):
        return f"an external link to {link.filename}:{link.path}"
    return f"a {type(link).__name__}"


def checked_datasets(
    f: h5py.Group,
    path: object,
    *,
    kept_length: int | None = None,
    vlen_bytes: bool = False,
    prefix: str = "",
) -> dict[str, h5py.Dataset]:
    """Every dataset of ``f`` (a file, or one group of it whose name is ``prefix``, ending in
    "/") by name ("infos/a/b"), after checking every link and storage.

    Only plain hard links to groups and datasets are accepted (never an external or soft link,
    which are not followed), datasets must store their data in this file (no external raw
    storage, no virtual dataset), use no filter but gzip, and declare no more than their
    stored chunks hold. With ``kept_length`` (a ``.partial`` about to be cut to that many
    steps), a schema dataset's rows past the ones it keeps do not count as declared.
    ``vlen_bytes`` also accepts variable-length byte strings (Minari's JPEG images). Raises
    EpisodeError naming the file and the dataset."""
    out: dict[str, h5py.Dataset] = {}
    stack: list[tuple[str, h5py.Group, int]] = [(prefix, f, prefix.count("/"))]
    unstored = 0
    while stack:
        prefix, group, depth = stack.pop()
        try:
            keys = list(group.keys())
        except READ_ERRORS as exc:
            raise EpisodeError(path, prefix.rstrip("/") or None, damaged(exc)) from None
        for key in keys:
            name = f"{prefix}{key}"
            try:
                obj = hard_linked(group, key, path, name)
                if len(out) + len(stack) > MAX_OBJECTS:
                    raise EpisodeError(
                        path, name, f"expected at most {MAX_OBJECTS} datasets and groups"
                    )
                if isinstance(obj, h5py.Group):
                    if depth + 1 > MAX_DEPTH:
                        raise EpisodeError(
                            path, name, f"expected groups nested at most {MAX_DEPTH} deep"
                        )
                    stack.append((name + "/", obj, depth + 1))
                    continue
                offset = LENGTH_OFFSETS.get(name.split("/")[0])
                rows = None if kept_length is None or offset is None else kept_length + offset
                unstored += _check_storage(obj, path, name, rows, vlen_bytes)
            except EpisodeError:
                raise
            except READ_ERRORS as exc:
                raise EpisodeError(path, name, damaged(exc)) from None
            if unstored > UNSTORED_BYTES:
                raise EpisodeError(
                    path,
                    name,
                    f"expected datasets that store their data, got shape {obj.shape} "
                    "declared without it (a file declaring more than it holds)",
                )
            out[name] = obj
    return dict(sorted(out.items()))


def damaged(exc: BaseException) -> str:
    """What an h5py error on reading means to a user, in one line."""
    return f"expected readable data, the file is damaged ({short_error(exc)})"


def hard_linked(group: h5py.Group, key: str, path: object, name: str) -> Any:
    """The group or dataset ``key`` of ``group`` (``name`` in errors), opened only if it is a
    plain hard link."""
    link = group.get(key, getlink=True)
    if not isinstance(link, h5py.HardLink):
        raise EpisodeError(
            path,
            name,
            f"expected a dataset or group stored in this file, got {describe_link(link)}",
        )
    obj = group[key]
    if not isinstance(obj, (h5py.Group, h5py.Dataset)):
        raise EpisodeError(path, name, f"expected a dataset or group, got a {type(obj).__name__}")
    return obj


def _check_storage(
    ds: h5py.Dataset, path: object, name: str, rows: int | None = None, vlen_bytes: bool = False
) -> int:
    """Check where and how ``ds`` stores its data; the declared bytes it does not store (of
    its first ``rows`` rows only, when given)."""
    dcpl = ds.id.get_create_plist()
    if ds.is_virtual:
        raise EpisodeError(path, name, "expected data stored in this file, got a virtual dataset")
    if dcpl.get_external_count():
        target = dcpl.get_external(0)[0].decode("utf-8", "replace")
        raise EpisodeError(
            path, name, f"expected data stored in this file, got data kept in {target}"
        )
    for i in range(dcpl.get_nfilters()):
        code = dcpl.get_filter(i)[0]
        if code not in ALLOWED_FILTERS:
            raise EpisodeError(
                path, name, f"expected no compression or gzip, got HDF5 filter {code}"
            )
    kind = ds.dtype.kind
    vlen = vlen_bytes and h5py.check_vlen_dtype(ds.dtype) == np.dtype(np.uint8)
    if kind not in "biuf" and h5py.check_string_dtype(ds.dtype) is None and not vlen:
        raise EpisodeError(path, name, f"expected numbers, booleans or text, got dtype {ds.dtype}")
    shape = ds.shape or ()
    if rows is not None and shape:
        shape = (min(shape[0], rows), *shape[1:])
    row = ds.dtype.itemsize
    declared = math.prod(shape) * row
    if ds.chunks is None:
        stored = ds.id.get_storage_size()
        return max(0, declared - stored)
    chunk_bytes = math.prod(ds.chunks) * row
    if chunk_bytes > MAX_CHUNK_BYTES:
        raise EpisodeError(
            path, name, f"expected chunks of at most {MAX_CHUNK_BYTES} bytes, got {ds.chunks}"
        )
    chunks = ds.id.get_num_chunks()
    if rows is not None:  # chunks past the kept rows store nothing that is kept
        chunks = min(chunks, math.prod(-(-s // c) for s, c in zip(shape, ds.chunks)))
    return max(0, declared - chunks * chunk_bytes)


GLOBAL_HEAP = b"GCOL"
_HEAP_OBJECT_HEADER = 16  # index (2), references (2), reserved (4), size (8)
MAX_HEAP_OBJECT_BYTES = 16 * 1024 * 1024
"""Largest variable-length value (an attribute's JSON text, a text cell, a Minari JPEG) a
file may hold. HDF5 reads such a value whole, with several copies (a 50 MB one costs 270 MB),
and tells its size only by reading it, so the size is checked in the global heap first."""


SCAN_CHUNK_BYTES = 1024 * 1024
"""Bytes of the file the global heap scan holds at a time (twice: the search and the walk),
whatever the file's size."""


class _FileWindow:
    """The bytes of an open file by position, read through one buffer of
    :data:`SCAN_CHUNK_BYTES` (the walk of a collection reads 16-byte headers in order)."""

    def __init__(self, fh: Any):
        self.fh = fh
        self.start = 0
        self.data = b""

    def read(self, pos: int, n: int) -> bytes:
        if not (self.start <= pos and pos + n <= self.start + len(self.data)):
            self.fh.seek(pos)
            self.data = self.fh.read(max(SCAN_CHUNK_BYTES, n))
            self.start = pos
        return self.data[pos - self.start : pos - self.start + n]


def global_heap_problem(path: object) -> str | None:
    """What is wrong with the global heap collections of the file at ``path`` (where HDF5
    keeps variable-length strings), or None: a collection whose object list never ends
    (HDF5 reads it forever: an object of size 0 does not move its cursor), or an object
    larger than :data:`MAX_HEAP_OBJECT_BYTES`. Looked at before HDF5 opens the file, in
    chunks of :data:`SCAN_CHUNK_BYTES` (a signature across two chunks is found once)."""
    overlap = len(GLOBAL_HEAP) - 1
    with open(path, "rb") as fh, open(path, "rb") as walker:
        size = os.fstat(fh.fileno()).st_size
        if size < 16:
            return None
        window = _FileWindow(walker)
        chunk_start = 0
        while chunk_start < size:
            chunk = fh.read(SCAN_CHUNK_BYTES + overlap)
            if not chunk:
                break
            limit = min(SCAN_CHUNK_BYTES, len(chunk))  # a hit past it is the next chunk's
            i = chunk.find(GLOBAL_HEAP)
            while 0 <= i < limit:
                problem = _heap_problem(window, chunk_start + i, size)
                if problem is not None:
                    return problem
                i = chunk.find(GLOBAL_HEAP, i + 4)
            chunk_start += SCAN_CHUNK_BYTES
            fh.seek(chunk_start)
    return None


def _heap_problem(m: _FileWindow, pos: int, file_size: int) -> str | None:
    """Walk the objects of the collection at ``pos`` as HDF5 does."""
    if pos + 16 > file_size:
        return None
    head = m.read(pos, 16)
    if head[4] != 1:
        return None  # not a collection (or one HDF5 refuses by itself)
    total = int.from_bytes(head[8:16], "little")
    end = pos + total
    if total < 16 or end > file_size:
        return None  # HDF5 fails to read it, cleanly
    p = pos + 16
    while p < end:
        if p + _HEAP_OBJECT_HEADER > end:
            return None
        obj = m.read(p, _HEAP_OBJECT_HEADER)
        index = int.from_bytes(obj[0:2], "little")
        length = int.from_bytes(obj[8:16], "little")
        need = length if index == 0 else _HEAP_OBJECT_HEADER + (length + 7) // 8 * 8
        if need == 0 or need >= 1 << 63:  # the cursor stays put, or wraps around
            return f"expected readable HDF5, the global heap at byte {pos} is damaged"
        if index != 0 and length > MAX_HEAP_OBJECT_BYTES:
            return (
                f"expected variable-length values (text attributes, text cells) of at most "
                f"{MAX_HEAP_OBJECT_BYTES} bytes, got one of {length} bytes (global heap at "
                f"byte {pos}; refused before reading it)"
            )
        p += need
    return None


@contextmanager
def guard(path: Path, field: str | None) -> Iterator[None]:
    """Turn what h5py raises for a damaged file into one EpisodeError naming ``field``."""
    try:
        yield
    except EpisodeError:
        raise
    except (*READ_ERRORS, UnicodeDecodeError, zlib.error) as exc:
        raise EpisodeError(path, field, damaged(exc)) from None


def open_h5(path: Path, mode: str) -> h5py.File:
    """The HDF5 file at ``path``, once it is known to be a regular file HDF5 can read."""
    problem = not_a_regular_file(path, "an episode file")
    if problem is not None:
        raise EpisodeError(path, None, problem)
    try:
        heap = global_heap_problem(path)
    except OSError as exc:
        raise EpisodeError(path, None, f"cannot read it ({exc.strerror or exc})") from None
    if heap is not None:
        raise EpisodeError(path, None, heap)
    try:
        return h5py.File(path, mode)
    except OSError as exc:
        detail = short_error(exc)
        if "signature" in detail or "truncated" in detail.lower() or "eof" in detail.lower():
            detail = "not HDF5, or truncated"
        raise EpisodeError(
            path, None, f"expected an HDF5 episode file, cannot open it ({detail})"
        ) from None

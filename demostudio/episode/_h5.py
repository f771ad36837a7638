"""Small h5py helpers shared by the writer, the reader and recovery (the only h5py users)."""

from __future__ import annotations

import json
import math
import mmap
import os
import zlib
from pathlib import Path
from typing import Any

import h5py
import numpy as np

TEXT = h5py.string_dtype("utf-8")
# Values of at least this many bytes get one chunk each, compressed (frames, image obs).
BIG_VALUE_BYTES = 4096
SMALL_CHUNK_ROWS = 1024
DEFLATE_LEVEL = 1


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


def read_json_attr(obj: h5py.HLObject, key: str) -> Any:
    """The JSON value of attribute ``key``; raises KeyError if absent, ValueError if not JSON."""
    raw = obj.attrs[key]
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8")
    if not isinstance(raw, str):
        raise ValueError(f"expected JSON text, got {type(raw).__name__} {raw!r:.60}")
    return json.loads(raw)


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


def is_big(shape: tuple[int, ...], dtype: np.dtype) -> bool:
    return dtype != TEXT and int(np.prod(shape, dtype=np.int64)) * dtype.itemsize >= BIG_VALUE_BYTES


def fill_value_for(dtype: np.dtype) -> Any:
    if dtype.kind == "f":
        return np.nan
    if dtype.kind == "b":
        return False
    return 0


# ---- reading hostile files ---------------------------------------------------------------------
# Every file is treated as hostile on read: links are looked at before anything is opened
# through them, datasets must keep their data inside the file, and no dataset may declare more
# data than its stored chunks hold (beyond a small budget for fill values), so a small file
# cannot make a reader allocate gigabytes.

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


def checked_datasets(f: h5py.File, path: object, error: type[Exception]) -> dict[str, h5py.Dataset]:
    """Every dataset of ``f`` by name ("infos/a/b"), after checking every link and storage.

    Only plain hard links to groups and datasets are accepted (never an external or soft link,
    which are not followed), datasets must store their data in this file (no external raw
    storage, no virtual dataset), use no filter but gzip, and declare no more than their
    stored chunks hold. Raises ``error(path, name, message)``."""
    out: dict[str, h5py.Dataset] = {}
    stack: list[tuple[str, h5py.Group, int]] = [("", f, 0)]
    unstored = 0
    while stack:
        prefix, group, depth = stack.pop()
        try:
            keys = list(group.keys())
        except READ_ERRORS as exc:
            raise error(path, prefix.rstrip("/") or None, damaged(exc)) from None
        for key in keys:
            name = f"{prefix}{key}"
            try:
                obj = _hard_linked(group, key, path, name, error)
                if len(out) + len(stack) > MAX_OBJECTS:
                    raise error(path, name, f"expected at most {MAX_OBJECTS} datasets and groups")
                if isinstance(obj, h5py.Group):
                    if depth + 1 > MAX_DEPTH:
                        raise error(path, name, f"expected groups nested at most {MAX_DEPTH} deep")
                    stack.append((name + "/", obj, depth + 1))
                    continue
                unstored += _check_storage(obj, path, name, error)
            except error:
                raise
            except READ_ERRORS as exc:
                raise error(path, name, damaged(exc)) from None
            if unstored > UNSTORED_BYTES:
                raise error(
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


def _hard_linked(group: h5py.Group, key: str, path: object, name: str, error) -> Any:
    """The group or dataset ``key`` of ``group``, opened only if it is a plain hard link."""
    link = group.get(key, getlink=True)
    if not isinstance(link, h5py.HardLink):
        raise error(
            path,
            name,
            f"expected a dataset or group stored in this file, got {describe_link(link)}",
        )
    obj = group[key]
    if not isinstance(obj, (h5py.Group, h5py.Dataset)):
        raise error(path, name, f"expected a dataset or group, got a {type(obj).__name__}")
    return obj


def _check_storage(ds: h5py.Dataset, path: object, name: str, error: type[Exception]) -> int:
    """Check where and how ``ds`` stores its data; the declared bytes it does not store."""
    dcpl = ds.id.get_create_plist()
    if ds.is_virtual:
        raise error(path, name, "expected data stored in this file, got a virtual dataset")
    if dcpl.get_external_count():
        target = dcpl.get_external(0)[0].decode("utf-8", "replace")
        raise error(path, name, f"expected data stored in this file, got data kept in {target}")
    for i in range(dcpl.get_nfilters()):
        code = dcpl.get_filter(i)[0]
        if code not in ALLOWED_FILTERS:
            raise error(path, name, f"expected no compression or gzip, got HDF5 filter {code}")
    kind = ds.dtype.kind
    if kind not in "biuf" and h5py.check_string_dtype(ds.dtype) is None:
        raise error(path, name, f"expected numbers, booleans or text, got dtype {ds.dtype}")
    shape = ds.shape or ()
    row = ds.dtype.itemsize
    declared = math.prod(shape) * row
    if ds.chunks is None:
        stored = ds.id.get_storage_size()
        return max(0, declared - stored)
    chunk_bytes = math.prod(ds.chunks) * row
    if chunk_bytes > MAX_CHUNK_BYTES:
        raise error(
            path, name, f"expected chunks of at most {MAX_CHUNK_BYTES} bytes, got {ds.chunks}"
        )
    chunks = ds.id.get_num_chunks()
    return max(0, declared - chunks * chunk_bytes)


def read_rows(ds: h5py.Dataset, index: Any) -> np.ndarray:
    """``ds[index]``, reading a dataset stored one gzip chunk per row a row at a time with the
    inflated size bounded by the row's size (no gzip bomb); others through h5py."""
    shape = ds.shape
    one_row = (
        ds.chunks is not None
        and len(shape) >= 1
        and ds.chunks == (1, *shape[1:])
        and ds.compression == "gzip"
        and not ds.shuffle
        and ds.dtype.kind in "biuf"
    )
    if not one_row:
        return ds[index]
    if isinstance(index, (int, np.integer)):
        return _inflate_row(ds, int(index))
    rows = range(*index.indices(shape[0])) if isinstance(index, slice) else None
    if rows is None:
        return ds[index]
    out = np.empty((len(rows), *shape[1:]), ds.dtype)
    for j, i in enumerate(rows):
        out[j] = _inflate_row(ds, i)
    return out


def _inflate_row(ds: h5py.Dataset, i: int) -> np.ndarray:
    row_shape = ds.shape[1:]
    size = math.prod(row_shape) * ds.dtype.itemsize
    coord = (i,) + (0,) * len(row_shape)
    stored = ds.id.get_chunk_info_by_coord(coord)
    if stored.byte_offset is None:
        return ds[i]  # an unstored row (fill value)
    # deflate never grows data by more than 5 bytes per 16 KB block plus a few header bytes
    if stored.size > size + size // 1000 + 1024 or stored.size > ds.file.id.get_filesize():
        raise ValueError(f"row {i}: stored in {stored.size} bytes, more than a row can take")
    mask, raw = ds.id.read_direct_chunk(coord)
    if mask != 0:
        return ds[i]
    inflater = zlib.decompressobj()
    data = inflater.decompress(raw, size)
    if len(data) != size or inflater.unconsumed_tail:
        raise ValueError(f"row {i}: expected {size} bytes once inflated, got another amount")
    return np.frombuffer(data, ds.dtype).reshape(row_shape)


GLOBAL_HEAP = b"GCOL"
_HEAP_OBJECT_HEADER = 16  # index (2), references (2), reserved (4), size (8)


def looping_global_heap(path: object) -> int | None:
    """The offset of a global heap collection (where HDF5 keeps variable-length strings)
    whose object list never ends, or None. HDF5 reads such a collection forever (an object of
    size 0 does not move its cursor), so files are checked for them before HDF5 opens them."""
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size < 16:
            return None
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as m:
            pos = m.find(GLOBAL_HEAP)
            while pos >= 0:
                if _heap_loops(m, pos, size):
                    return pos
                pos = m.find(GLOBAL_HEAP, pos + 4)
    return None


def _heap_loops(m: mmap.mmap, pos: int, file_size: int) -> bool:
    """Walk the objects of the collection at ``pos`` as HDF5 does; True if it never ends."""
    if pos + 16 > file_size or m[pos + 4] != 1:
        return False  # not a collection (or one HDF5 refuses by itself)
    total = int.from_bytes(m[pos + 8 : pos + 16], "little")
    end = pos + total
    if total < 16 or end > file_size:
        return False  # HDF5 fails to read it, cleanly
    p = pos + 16
    while p < end:
        if p + _HEAP_OBJECT_HEADER > end:
            return False
        index = int.from_bytes(m[p : p + 2], "little")
        length = int.from_bytes(m[p + 8 : p + 16], "little")
        need = length if index == 0 else _HEAP_OBJECT_HEADER + (length + 7) // 8 * 8
        if need == 0 or need >= 1 << 63:
            return True  # the cursor stays put, or wraps around
        p += need
    return False

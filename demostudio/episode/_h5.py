"""Small h5py helpers shared by the writer, the reader and recovery (the only h5py users)."""

from __future__ import annotations

import json
import math
import os
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

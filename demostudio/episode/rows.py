"""Reading a dataset's rows from a hostile episode file: rows stored one gzip chunk each are
inflated here with their size bounded by the row's size (no gzip bomb)."""

from __future__ import annotations

import math
import zlib
from typing import Any

import h5py
import numpy as np


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

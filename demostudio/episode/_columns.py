"""Growing HDF5 datasets of an episode being written: one column (big values compressed and
written a chunk at a time, small ones buffered until a flush), and the info columns created
as keys appear, with what is absent marked."""

from __future__ import annotations

from typing import Any

import h5py
import numpy as np

from . import _h5
from .journal import Packed


class _Column:
    """One growing dataset. Big values are compressed and written a chunk at a time as they
    come; small ones are buffered and written at each flush."""

    def __init__(
        self,
        file: h5py.File,
        name: str,
        shape: tuple[int, ...],
        dtype: np.dtype,
        start_rows: int = 0,
        big: bool | None = None,
    ):
        self.name = name
        self.shape = shape
        self.dtype = dtype
        self.big = _h5.is_big(shape, dtype) if big is None else big
        self.fill = None if dtype == _h5.TEXT else _h5.fill_value_for(dtype)
        self.rows = 0  # rows appended so far (buffered or written)
        self.written = 0  # rows on disk (small columns)
        self.pending: list[Any] = []
        if self.big:
            self.dset = file.create_dataset(
                name,
                shape=(0, *shape),
                maxshape=(None, *shape),
                dtype=dtype,
                chunks=(1, *shape),
                compression="gzip",
                compression_opts=_h5.DEFLATE_LEVEL,
            )
            self.capacity = 0
        else:
            row_bytes = max(1, int(np.prod(shape, dtype=np.int64)) * max(dtype.itemsize, 1))
            chunk_rows = max(16, min(_h5.SMALL_CHUNK_ROWS, 65536 // row_bytes))
            kwargs: dict[str, Any] = {}
            if self.fill is not None:
                kwargs["fillvalue"] = self.fill
            self.dset = file.create_dataset(
                name,
                shape=(0, *shape),
                maxshape=(None, *shape),
                dtype=dtype,
                chunks=(chunk_rows, *shape),
                **kwargs,
            )
        for _ in range(start_rows):
            self.append(None)

    def append(self, value: Any) -> None:
        """Append one row; ``None`` means the fill value. Big values may come deflated already
        (:class:`Packed`, as the writer thread journals them), so they are deflated once."""
        if self.big:
            if self.rows >= self.capacity:
                self.capacity = max(64, self.capacity * 2)
                self.dset.resize(self.capacity, axis=0)
            if not isinstance(value, Packed) or value.dtype != self.dtype:
                arr = np.full(self.shape, self.fill, self.dtype) if value is None else value
                arr = value.unpack() if isinstance(arr, Packed) else arr
                value = Packed.of(np.asarray(arr, dtype=self.dtype), _h5.DEFLATE_LEVEL)
            if value.shape != self.shape:
                raise ValueError(f"expected shape {self.shape}, got {value.shape}")
            self.dset.id.write_direct_chunk((self.rows,) + (0,) * len(self.shape), value.data)
        else:
            self.pending.append(value.unpack() if isinstance(value, Packed) else value)
        self.rows += 1

    def flush(self) -> None:
        if self.big:
            return
        if not self.pending:
            return
        n = len(self.pending)
        if self.dtype == _h5.TEXT:
            block = np.array(["" if v is None else v for v in self.pending], dtype=object)
        else:
            block = np.full((n, *self.shape), self.fill, dtype=self.dtype)
            for i, v in enumerate(self.pending):
                if v is not None:
                    block[i] = v
        self.dset.resize(self.written + n, axis=0)
        self.dset[self.written : self.written + n] = block
        self.written += n
        self.pending.clear()

    def finish(self) -> None:
        self.flush()
        if self.big:
            self.dset.resize(self.rows, axis=0)


def _fits(arr: np.ndarray, dtype: np.dtype) -> bool:
    """Whether ``arr`` converts to ``dtype`` with no value changed (2 -> 2.0 yes, 2.5 -> 2 no)."""
    if np.can_cast(arr.dtype, dtype, "safe"):
        return True
    with np.errstate(all="ignore"):
        return bool(np.array_equal(arr.astype(dtype), arr))


class _Infos:
    """Info columns created as keys appear; missing values are filled and marked absent."""

    def __init__(self, file: h5py.File):
        self.file = file
        self.columns: dict[str, _Column] = {}
        self.present: dict[str, _Column] = {}
        self.rows = 0

    def append(self, flat: dict[str, np.ndarray | str]) -> None:
        """Append one row of a :func:`flat_info`: numeric leaves as arrays, the rest as text."""
        for name, value in flat.items():
            arr = value if isinstance(value, np.ndarray) else None
            col = self.columns.get(name)
            if col is None:
                if arr is not None:
                    col = _Column(self.file, f"infos/{name}", arr.shape, arr.dtype, self.rows)
                else:
                    col = _Column(self.file, f"infos/{name}", (), _h5.TEXT, self.rows)
                self.columns[name] = col
                if self.rows:
                    self._mark_absent_before(name)
            if col.dtype == _h5.TEXT:
                col.append(value if isinstance(value, str) else _h5.to_json(value))
                ok = True
            elif arr is not None and arr.shape == col.shape and _fits(arr, col.dtype):
                col.append(arr.astype(col.dtype))
                ok = True
            else:  # shape or type changed mid-episode, not storable as is: marked absent
                col.append(None)
                ok = False
            if not ok:
                self._ensure_present(name)
            if name in self.present:
                self.present[name].append(ok)
        for name, col in self.columns.items():
            if name not in flat:
                col.append(None)
                self._ensure_present(name)
                self.present[name].append(False)
        self.rows += 1

    def _mark_absent_before(self, name: str) -> None:
        col = _Column(self.file, f"info_present/{name}", (), np.dtype(bool))
        for _ in range(self.rows):
            col.append(False)
        self.present[name] = col

    def _ensure_present(self, name: str) -> None:
        if name in self.present:
            return
        col = _Column(self.file, f"info_present/{name}", (), np.dtype(bool))
        already = self.columns[name].rows - 1  # rows before the current one were present
        for _ in range(already):
            col.append(True)
        self.present[name] = col

    def all_columns(self) -> list[_Column]:
        return [*self.columns.values(), *self.present.values()]

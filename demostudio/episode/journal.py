"""The recording journal: an append-only log beside a ``.partial`` that survives any crash.

HDF5 makes no promise about a file whose writer is killed, least of all during a flush: its
metadata is then half old, half new. So while an episode is recorded, the writer thread also
appends every item it handles (attributes, the reset, each step; big arrays already deflated)
to ``<name>.h5.journal`` with one ``write`` each, before giving it to HDF5. A record is

    u32 length | u32 crc32 | u32 header length | JSON header | blobs

where the JSON header describes the item and every array by dtype, shape, offset and size in
the blobs. A kill can only cut the last record short, which its length or checksum gives away,
so :func:`read_journal` returns every item up to the kill. The journal is synced to disk once
per flush interval (a power cut loses at most that much), and deleted once the episode is
saved under its final name.

Reading treats the file as hostile: no pickle, only numeric dtypes, every size checked against
the file before anything is read or inflated.
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

MAGIC = b"DEMOSTUDIO-JOURNAL-1\n"
JOURNAL_SUFFIX = ".h5.journal"
_HEAD = struct.Struct("<III")  # record length (after these 8 bytes: crc), crc32, header length
MAX_RECORD_BYTES = 1 << 30
"""Largest record a reader accepts (a 1 GiB step is damage, not data)."""
_DTYPE_KINDS = "biuf"


class Packed(NamedTuple):
    """An array deflated (zlib, whole array) once, for the journal and the HDF5 chunk alike."""

    data: bytes
    dtype: np.dtype
    shape: tuple[int, ...]

    @classmethod
    def of(cls, array: np.ndarray, level: int) -> Packed:
        array = np.ascontiguousarray(array)
        return cls(zlib.compress(array.tobytes(), level), array.dtype, tuple(array.shape))

    def unpack(self) -> np.ndarray:
        return np.frombuffer(zlib.decompress(self.data), self.dtype).reshape(self.shape)


class JournalError(ValueError):
    """A record that cannot be read (the journal ends there)."""


# ---- encoding ------------------------------------------------------------------------------


def _encode_value(value: Any, blobs: list[bytes], offset: list[int]) -> Any:
    if isinstance(value, Packed):
        kind, data, dtype, shape = "z", value.data, value.dtype, value.shape
    elif isinstance(value, np.ndarray):
        kind, data, dtype, shape = (
            "a",
            np.ascontiguousarray(value).tobytes(),
            value.dtype,
            value.shape,
        )
    elif isinstance(value, dict):
        return {"d": {k: _encode_value(v, blobs, offset) for k, v in value.items()}}
    elif isinstance(value, (list, tuple)):
        return {"l": [_encode_value(v, blobs, offset) for v in value]}
    else:  # str, int, float, bool, None
        return {"v": value}
    spec = {kind: [dtype.str, list(shape), offset[0], len(data)]}
    blobs.append(data)
    offset[0] += len(data)
    return spec


def encode(item: dict[str, Any]) -> bytes:
    """One journal record (with its length and checksum) for ``item``: a dict of plain values,
    numeric arrays, :class:`Packed` arrays, lists and dicts of those."""
    blobs: list[bytes] = []
    header = json.dumps(_encode_value(item, blobs, [0]), allow_nan=True).encode("utf-8")
    body = struct.pack("<I", len(header)) + header + b"".join(blobs)
    return struct.pack("<II", len(body), zlib.crc32(body)) + body


# ---- decoding ------------------------------------------------------------------------------


def _array_spec(spec: Any, blob: memoryview) -> tuple[np.dtype, tuple[int, ...], memoryview]:
    if not (isinstance(spec, list) and len(spec) == 4):
        raise JournalError(f"expected [dtype, shape, offset, size], got {spec!r:.60}")
    dtype_text, shape, start, size = spec
    try:
        dtype = np.dtype(str(dtype_text))
    except TypeError as exc:
        raise JournalError(f"expected a numeric dtype, got {dtype_text!r:.30}") from exc
    if dtype.kind not in _DTYPE_KINDS or dtype.hasobject:
        raise JournalError(f"expected a numeric dtype, got {dtype}")
    if not (isinstance(shape, list) and all(isinstance(n, int) and n >= 0 for n in shape)):
        raise JournalError(f"expected a shape, got {shape!r:.60}")
    if not (isinstance(start, int) and isinstance(size, int) and 0 <= start <= start + size):
        raise JournalError(f"expected an offset and a size, got {start!r}, {size!r}")
    if start + size > len(blob):
        raise JournalError(f"array of {size} bytes at {start} runs past the record")
    return dtype, tuple(shape), blob[start : start + size]


def _decode_value(spec: Any, blob: memoryview) -> Any:
    if not isinstance(spec, dict) or len(spec) != 1:
        raise JournalError(f"expected a one-key object, got {spec!r:.60}")
    ((kind, body),) = spec.items()
    if kind == "v":
        return body
    if kind == "l":
        if not isinstance(body, list):
            raise JournalError("expected a list")
        return [_decode_value(v, blob) for v in body]
    if kind == "d":
        if not isinstance(body, dict):
            raise JournalError("expected an object")
        return {str(k): _decode_value(v, blob) for k, v in body.items()}
    if kind in ("a", "z"):
        dtype, shape, data = _array_spec(body, blob)
        expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if kind == "a":
            if len(data) != expected:
                raise JournalError(
                    f"expected {expected} bytes for {shape} {dtype}, got {len(data)}"
                )
            return np.frombuffer(data, dtype).reshape(shape).copy()
        inflater = zlib.decompressobj()
        try:
            raw = inflater.decompress(data, expected + 1)
        except zlib.error as exc:
            raise JournalError(f"damaged deflate data ({exc})") from None
        if len(raw) != expected or inflater.unconsumed_tail or not inflater.eof:
            raise JournalError(f"expected {expected} inflated bytes for {shape} {dtype}")
        return Packed(bytes(data), dtype, shape)
    raise JournalError(f"unknown value kind {kind!r:.20}")


def _decode(body: memoryview) -> dict[str, Any]:
    if len(body) < 4:
        raise JournalError("record too short")
    (header_len,) = struct.unpack_from("<I", body)
    if 4 + header_len > len(body):
        raise JournalError("header runs past the record")
    try:
        header = json.loads(bytes(body[4 : 4 + header_len]).decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise JournalError(f"header is not JSON ({type(exc).__name__})") from None
    item = _decode_value(header, body[4 + header_len :])
    if not isinstance(item, dict) or not isinstance(item.get("kind"), str):
        raise JournalError("expected an item with a kind")
    return item


def read_journal(path: str | os.PathLike, max_items: int | None = None) -> Iterator[dict]:
    """The items of a journal, in order, up to the end or the first damaged record (a crash
    leaves at most the last one cut short). Raises JournalError if the file is no journal."""
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if fh.read(len(MAGIC)) != MAGIC:
            raise JournalError("not a DemoStudio journal (bad magic)")
        pos = len(MAGIC)
        count = 0
        while pos + 8 <= size and (max_items is None or count < max_items):
            length, crc = struct.unpack("<II", fh.read(8))
            if length > MAX_RECORD_BYTES or pos + 8 + length > size:
                return  # cut short by the crash
            body = fh.read(length)
            if len(body) != length or zlib.crc32(body) != crc:
                return  # torn record
            yield _decode(memoryview(body))
            pos += 8 + length
            count += 1


class Journal:
    """The writing side: append records, sync now and then, delete when the episode is safe."""

    def __init__(self, path: Path):
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
        try:
            self._write(MAGIC)
        except BaseException:  # no room even for the magic: the caller removes the file
            self.close()
            raise

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    def append(self, item: dict[str, Any]) -> None:
        self._write(encode(item))

    def sync(self) -> None:
        os.fdatasync(self._fd) if hasattr(os, "fdatasync") else os.fsync(self._fd)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def delete(self) -> None:
        self.close()
        self.path.unlink(missing_ok=True)

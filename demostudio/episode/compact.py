"""Re-compressing an episode's frames harder, for archiving or shipping.

Recording deflates frames at level 1 (cheap enough for live play); ``compact`` re-deflates each
frame chunk at a higher level. Same filter and chunking, so every reader works unchanged, and
the pixels are identical (checked before the file is replaced). The new file is written beside
the old one and atomically renamed over it."""

from __future__ import annotations

import os
import zlib
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np

from . import _h5
from .reader import EpisodeFile
from .schema import EpisodeError


@dataclass(frozen=True)
class CompactResult:
    path: Path
    bytes_before: int
    bytes_after: int
    skipped: str | None = None
    """Why the file was left as it was (already compact, no frames), or None."""


def compact_episode(path: str | os.PathLike, level: int = 9) -> CompactResult:
    """Re-deflate the frames of episode ``path`` at ``level`` (1-9), in place and atomically.

    Frames are read through the episode reader, a row at a time with the inflated size
    bounded (a gzip bomb is refused, not inflated), whatever their layout (one deflated
    chunk per frame, other chunks, or contiguous); a file that cannot be read is left as
    it was, with one EpisodeError naming ``frames``."""
    if not 1 <= level <= 9:
        raise ValueError(f"expected a deflate level from 1 to 9, got {level}")
    path = Path(path)
    before = path.stat().st_size
    tmp = path.with_name(path.name + ".compact.partial")
    try:
        with EpisodeFile(path) as ep:  # validates format, version and declared shapes first
            if not ep.has_frames:
                return CompactResult(path, before, before, "no frames")
            # The frames' filter records the level their chunks were deflated at (recording: 1).
            current = ep.h5["frames"].compression_opts
            if isinstance(current, int) and current >= level:
                return CompactResult(path, before, before, f"already compact (level {current})")
            _write_compacted(ep, tmp, level)
        _h5.fsync_path(tmp)
        os.replace(tmp, path)
        _h5.fsync_dir(path.parent)
    finally:
        tmp.unlink(missing_ok=True)
    return CompactResult(path, before, path.stat().st_size)


def _write_compacted(ep: EpisodeFile, tmp: Path, level: int) -> None:
    """Write ``ep`` to ``tmp`` with its frames one chunk each, deflated at ``level``; every
    other dataset and attribute copied as it is."""
    src = ep.h5
    frames = src["frames"]
    linked = isinstance(src.get("observations"), h5py.Dataset) and (
        src["observations"].id == frames.id
    )
    with h5py.File(tmp, "w") as dst:
        for key, value in src.attrs.items():
            dst.attrs[key] = value
        for name in src:
            if name == "frames" or (linked and name == "observations"):
                continue
            src.copy(src[name], dst, name=name)
        out = dst.create_dataset(
            "frames",
            shape=frames.shape,
            maxshape=(None, *frames.shape[1:]),
            dtype=np.uint8,
            chunks=(1, *frames.shape[1:]),
            compression="gzip",
            compression_opts=level,
        )
        zeros = (0,) * (frames.ndim - 1)
        for i in range(frames.shape[0]):
            data = ep.frame(i).tobytes()  # bounded by a frame's size
            out.id.write_direct_chunk((i, *zeros), zlib.compress(data, level))
        if linked:
            dst["observations"] = out
        for i in range(frames.shape[0]):  # lossless, or nothing is replaced
            if not np.array_equal(out[i], ep.frame(i)):
                raise EpisodeError(ep.path, "frames", f"frame {i} changed while compacting")

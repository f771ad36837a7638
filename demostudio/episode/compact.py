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
    """Re-deflate the frames of episode ``path`` at ``level`` (1-9), in place and atomically."""
    if not 1 <= level <= 9:
        raise ValueError(f"expected a deflate level from 1 to 9, got {level}")
    path = Path(path)
    with EpisodeFile(path) as ep:  # validates format and version first
        ep.check_lengths()
        has_frames = ep.has_frames
        # The frames' filter records the level their chunks were deflated at (recording: 1).
        current = ep.h5["frames"].compression_opts if has_frames else None
    before = path.stat().st_size
    if not has_frames:
        return CompactResult(path, before, before, "no frames")
    if isinstance(current, int) and current >= level:
        return CompactResult(path, before, before, f"already compact (level {current})")
    tmp = path.with_name(path.name + ".compact.partial")
    try:
        with h5py.File(path, "r") as src, h5py.File(tmp, "w") as dst:
            for key, value in src.attrs.items():
                dst.attrs[key] = value
            frames = src["frames"]
            linked = isinstance(src.get("observations"), h5py.Dataset) and (
                src["observations"].id == frames.id
            )
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
                mask, raw = frames.id.read_direct_chunk((i, *zeros))
                data = zlib.decompress(raw) if mask == 0 else frames[i].tobytes()
                out.id.write_direct_chunk((i, *zeros), zlib.compress(data, level))
            if linked:
                dst["observations"] = out
            for i in range(frames.shape[0]):  # lossless, or nothing is replaced
                if not np.array_equal(out[i], frames[i]):
                    raise EpisodeError(path, "frames", f"frame {i} changed while compacting")
        _h5.fsync_path(tmp)
        os.replace(tmp, path)
        _h5.fsync_dir(path.parent)
    finally:
        tmp.unlink(missing_ok=True)
    return CompactResult(path, before, path.stat().st_size)

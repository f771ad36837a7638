"""Recovering ``.partial`` files left by a crash, up to their last flush."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np

from . import _h5
from .reader import _walk, find_partials
from .schema import FORMAT_NAME, LENGTH_OFFSETS, PARTIAL_SUFFIX, SUFFIX


@dataclass(frozen=True)
class Recovery:
    """What happened to one ``.partial`` file."""

    partial: Path
    episode: Path | None
    """The recovered episode, or None when nothing was usable."""
    steps: int
    reason: str


def _final_name(partial: Path) -> Path:
    return partial.with_name(partial.name[: -len(PARTIAL_SUFFIX)] + SUFFIX)


def recover_partial(partial: str | os.PathLike) -> Recovery:
    """Turn ``partial`` into a valid episode truncated at its last flush, marked recovered.

    Leaves the file untouched and says why when nothing is usable (never raises for a bad
    file)."""
    partial = Path(partial)
    target = _final_name(partial)
    if target.exists():
        return Recovery(partial, None, 0, f"not recovered: {target.name} already exists")
    try:
        f = h5py.File(partial, "r+")
    except OSError as exc:
        return Recovery(partial, None, 0, f"unreadable HDF5 (crashed mid-write): {exc}")
    try:
        try:
            fmt = _h5.read_json_attr(f, "format")
            n = int(_h5.read_json_attr(f, "flushed_steps"))
        except (KeyError, ValueError, TypeError) as exc:
            return Recovery(partial, None, 0, f"not a DemoStudio partial episode ({exc})")
        if fmt != FORMAT_NAME:
            return Recovery(partial, None, 0, f"format is {fmt!r}, not {FORMAT_NAME!r}")
        if n < 1 or "observations" not in f or "actions" not in f:
            return Recovery(partial, None, 0, "no complete step was flushed before the crash")
        for name, ds in list(_walk(f)):
            offset = LENGTH_OFFSETS.get(name.split("/")[0])
            if offset is None:
                continue
            if ds.shape[0] < n + offset:
                return Recovery(
                    partial, None, 0, f"{name} has {ds.shape[0]} rows, fewer than flushed"
                )
            ds.resize(n + offset, axis=0)
        rewards = f["rewards"][()]
        _h5.write_attrs(
            f,
            {
                "length": n,
                "total_return": float(np.sum(rewards)),
                "terminated": bool(f["terminations"][n - 1]),
                "truncated": True,
                "recovered": True,
            },
        )
        f.flush()
    except (OSError, KeyError, ValueError) as exc:
        return Recovery(partial, None, 0, f"damaged beyond its last flush: {exc}")
    finally:
        f.close()
    _h5.fsync_path(partial)
    os.replace(partial, target)
    _h5.fsync_dir(target.parent)
    return Recovery(partial, target, n, f"recovered {n} steps (up to the last flush)")


def recover_folder(folder: str | os.PathLike) -> list[Recovery]:
    """Recover every ``.partial`` under ``folder``."""
    return [recover_partial(p) for p in find_partials(folder)]

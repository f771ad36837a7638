"""Recovering episodes left by a crash: ``.partial`` files and the journals beside them.

A recording writes ``<name>.h5.partial`` (HDF5) and ``<name>.h5.journal`` (an append-only log,
see :mod:`.journal`). The journal holds every step up to the kill whatever state HDF5 was
left in, so recovery rebuilds the episode from it through the writer's own code
(:class:`EpisodeSink`). A ``.partial`` without a journal (written before journals existed)
is cut back to its last flush instead. Nothing here raises for a bad file: a
:class:`Recovery` says what happened.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np

from . import _h5
from ._sink import EpisodeSink
from .journal import JOURNAL_SUFFIX, read_journal
from .reader import EpisodeFile, _walk
from .schema import FORMAT_NAME, LENGTH_OFFSETS, PARTIAL_SUFFIX, SUFFIX
from .spaces import space_from_json

_NO_RESET = "it ends before the reset"
_NOTHING_FLUSHED = "no complete step was flushed before the crash"


@dataclass(frozen=True)
class Recovery:
    """What happened to one ``.partial`` file."""

    partial: Path
    episode: Path | None
    """The recovered episode, or None when nothing was usable."""
    steps: int
    reason: str


def _stem(path: Path) -> str | None:
    for suffix in (PARTIAL_SUFFIX, JOURNAL_SUFFIX):
        if path.name.endswith(suffix):
            return path.name[: -len(suffix)]
    return None


def recover_partial(partial: str | os.PathLike) -> Recovery:
    """Turn ``partial`` (a ``.partial`` or its journal) into a valid episode holding every
    step that reached the journal (or, without one, up to its last flush), marked recovered
    and truncated. Leaves the files untouched and says why when nothing is usable."""
    given = Path(partial)
    stem = _stem(given)
    if stem is None:
        return Recovery(given, None, 0, f"expected a {PARTIAL_SUFFIX} file, got {given.name}")
    partial = given.with_name(stem + PARTIAL_SUFFIX)
    journal = given.with_name(stem + JOURNAL_SUFFIX)
    target = given.with_name(stem + SUFFIX)
    if not partial.exists() and not journal.exists():
        return Recovery(given, None, 0, "no such file")
    if target.exists():
        if not partial.exists():  # killed after the rename, before the journal was deleted
            journal.unlink()
            return Recovery(journal, target, 0, "already saved: removed its leftover journal")
        return Recovery(partial, None, 0, f"not recovered: {target.name} already exists")
    why = "no journal"
    if journal.exists():
        result, why = _from_journal(partial, journal, target)
        if result is not None:
            return result
    if not partial.exists():
        return Recovery(journal, None, 0, f"journal unusable ({why}) and no .partial")
    result = _from_hdf5(partial, target)
    if result.reason == _NOTHING_FLUSHED and why == _NO_RESET:
        # Killed between creating the files and recording the reset: nothing to keep.
        partial.unlink()
        journal.unlink(missing_ok=True)
        return Recovery(partial, None, 0, "killed before its reset was recorded: removed")
    if result.episode is None and journal.exists():
        return Recovery(partial, None, 0, f"journal unusable ({why}); {result.reason}")
    journal.unlink(missing_ok=True)
    return result


def _from_journal(partial: Path, journal: Path, target: Path) -> tuple[Recovery | None, str]:
    """Rebuild the episode from its journal; (None, why) when the journal is unusable."""
    tmp = partial.with_name(partial.name + ".recovering")
    sink = None
    try:
        items = read_journal(journal)
        first = next(items, None)
        if first is None:
            return None, _NO_RESET
        if first.get("kind") != "attrs":
            return None, "expected the episode's attributes first"
        attrs = first["attrs"]
        if not isinstance(attrs, dict) or not all(isinstance(v, str) for v in attrs.values()):
            return None, "expected attributes as JSON texts"
        if json.loads(attrs.get("format", "null")) != FORMAT_NAME:
            return None, f"format is not {FORMAT_NAME!r}"
        spaces = [
            space_from_json(json.loads(attrs[k])) for k in ("observation_space", "action_space")
        ]
        sink = EpisodeSink(tmp, *spaces, attrs)
        for item in items:
            sink.handle(item)
        if not sink.reset_done:
            sink.close()
            tmp.unlink(missing_ok=True)
            return None, _NO_RESET
        n = sink.steps
        _h5.write_attrs(
            sink.file,
            {
                "length": n,
                "total_return": sink.total_return,
                "terminated": sink.last_terminated,
                "truncated": True,
                "recovered": True,
            },
        )
        sink.finish()
        with EpisodeFile(tmp) as ep:  # never publish a file the reader would refuse
            ep.check_lengths()
        _h5.fsync_path(tmp)
        os.replace(tmp, target)
        _h5.fsync_dir(target.parent)
    except Exception as exc:  # a damaged or hostile journal: any error means "not usable"
        if sink is not None:
            try:
                sink.close()
            except Exception:
                pass
        tmp.unlink(missing_ok=True)
        return None, f"{type(exc).__name__}: {exc}"
    partial.unlink(missing_ok=True)
    journal.unlink()
    return Recovery(partial, target, n, f"recovered {n} steps (every step in the journal)"), ""


def _from_hdf5(partial: Path, target: Path) -> Recovery:
    """Cut a ``.partial`` back to its last flush (files written before journals existed)."""
    try:
        f = h5py.File(partial, "r+")
    except Exception as exc:  # h5py raises OSError, and others on damaged metadata
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
            return Recovery(partial, None, 0, _NOTHING_FLUSHED)
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
    except Exception as exc:  # damaged metadata surfaces as many h5py error types
        return Recovery(partial, None, 0, f"damaged beyond its last flush: {exc}")
    finally:
        try:
            f.close()
        except Exception:
            pass
    _h5.fsync_path(partial)
    os.replace(partial, target)
    _h5.fsync_dir(target.parent)
    return Recovery(partial, target, n, f"recovered {n} steps (up to the last flush)")


def find_leftovers(folder: str | os.PathLike) -> list[Path]:
    """One path per episode a crash left under ``folder``: its ``.partial``, or its journal
    when that is all there is."""
    folder = Path(folder)
    partials = set(folder.glob(f"**/*{PARTIAL_SUFFIX}"))
    for journal in folder.glob(f"**/*{JOURNAL_SUFFIX}"):
        if journal.with_name(_stem(journal) + PARTIAL_SUFFIX) not in partials:
            partials.add(journal)
    return sorted(partials)


def recover_folder(folder: str | os.PathLike) -> list[Recovery]:
    """Recover every episode a crash left under ``folder``."""
    return [recover_partial(p) for p in find_leftovers(folder)]

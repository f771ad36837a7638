"""Recovering episodes left by a crash: ``.partial`` files and the journals beside them.

A recording writes ``<name>.h5.partial`` (HDF5) and ``<name>.h5.journal`` (an append-only log,
see :mod:`.journal`). The journal holds every step up to the kill whatever state HDF5 was
left in, so recovery rebuilds the episode from it through the writer's own code
(:class:`EpisodeSink`). A ``.partial`` without a journal (written before journals existed)
is cut back to its last flush instead. Nothing here raises for a bad file: a
:class:`Recovery` says what happened. A disk that refuses the recovered episode (no room, a
quota, read-only) is no fault of the file: that raises :class:`EpisodeError`, with every file
left as it was, so recovery can run again once there is room.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import h5py
import numpy as np

from . import _h5
from ._sink import EpisodeSink
from .attrs import read_attr, read_json
from .hostile import checked_datasets, guard, open_h5, read_rows
from .journal import JOURNAL_SUFFIX, read_journal
from .library import validate
from .reader import running_returns
from .schema import (
    FORMAT_NAME,
    LENGTH_OFFSETS,
    PARTIAL_SUFFIX,
    REQUIRED_DATASETS,
    SUFFIX,
    EpisodeError,
)
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
        _publish(tmp, target)  # never publish a file validate would refuse
    except Exception as exc:  # a damaged or hostile journal: any error means "not usable"
        if sink is not None:
            sink.abandon()
        tmp.unlink(missing_ok=True)
        _raise_if_no_room(exc, partial, target)
        return None, f"{type(exc).__name__}: {exc}"
    partial.unlink(missing_ok=True)
    journal.unlink()
    return Recovery(partial, target, n, f"recovered {n} steps (every step in the journal)"), ""


def _raise_if_no_room(exc: BaseException, partial: Path, target: Path) -> None:
    """EpisodeError when ``exc`` is the disk refusing to write (no room, a quota, read-only:
    :data:`._h5.CANNOT_WRITE_ERRNOS`) rather than a sign of a damaged file."""
    number = _h5.os_errno(exc)
    if number in _h5.CANNOT_WRITE_ERRNOS:
        then = "make room" if number in (errno.ENOSPC, errno.EDQUOT) else "make it writable"
        raise EpisodeError(
            partial,
            None,
            f"not recovered: cannot write {target.name} ({os.strerror(number)}); nothing was "
            f"changed: {then}, then run `demostudio recover` again",
        ) from None


def _publish(tmp: Path, target: Path) -> None:
    """Move the rebuilt episode ``tmp`` to ``target``, only if :func:`validate` accepts it
    (EpisodeError with its first problem otherwise)."""
    problems = validate(tmp)
    if problems:
        raise EpisodeError(tmp, None, f"would not be valid: {_without(problems[0], tmp)}")
    _h5.fsync_path(tmp)
    os.replace(tmp, target)
    _h5.fsync_dir(target.parent)


def _without(message: str, path: Path) -> str:
    """An error about ``path`` without its path: "[field]: what" (the caller names the file)."""
    return message.removeprefix(str(path)).lstrip(" :")


def _from_hdf5(partial: Path, target: Path) -> Recovery:
    """Cut a ``.partial`` back to its last flush (files written before journals existed).

    The ``.partial`` is read as hostile input and never changed: it is checked read-only (no
    link out of the file is followed, every dataset stores at least ``flushed_steps`` steps
    in this file), a copy of it is cut, and the copy is published only if :func:`validate`
    accepts it. The ``.partial`` is removed once the episode is in place."""
    try:
        n = _flushed_steps(partial)
    except EpisodeError as exc:
        return Recovery(partial, None, 0, _without(str(exc), partial))
    if n < 1:
        return Recovery(partial, None, 0, _NOTHING_FLUSHED)
    tmp = partial.with_name(partial.name + ".recovering")
    try:
        shutil.copyfile(partial, tmp)
        _cut(tmp, n)
        _publish(tmp, target)
    except EpisodeError as exc:
        tmp.unlink(missing_ok=True)
        return Recovery(partial, None, 0, _without(str(exc), tmp))
    except (OSError, RuntimeError) as exc:  # no room for the copy, a read-only folder
        tmp.unlink(missing_ok=True)
        _raise_if_no_room(exc, partial, target)
        why = _h5.failure_reason(exc)
        return Recovery(partial, None, 0, f"cannot write the episode ({why})")
    partial.unlink(missing_ok=True)
    return Recovery(partial, target, n, f"recovered {n} steps (up to the last flush)")


def _flushed_steps(partial: Path) -> int:
    """``flushed_steps`` of ``partial`` (below 1: nothing was flushed), read-only, after
    checking that every dataset is stored in the file with at least that many steps."""
    f = open_h5(partial, "r")
    try:
        with guard(partial, None):
            fmt = _attr(f, partial, "format", read_attr)
            n = _attr(f, partial, "flushed_steps", read_json)
            if fmt != FORMAT_NAME:
                raise EpisodeError(partial, "format", f"expected {FORMAT_NAME!r}, got {fmt!r:.60}")
            if not isinstance(n, int) or isinstance(n, bool) or n < -1:
                raise EpisodeError(
                    partial, "flushed_steps", f"expected an integer >= -1, got {n!r:.60}"
                )
            if n >= 1:
                _flushed_datasets(f, partial, n)
            return n
    finally:
        f.close()


def _attr(f: h5py.File, path: Path, key: str, read: Callable[..., Any]) -> Any:
    try:
        return read(f, key, path)
    except KeyError:
        raise EpisodeError(path, key, "expected this attribute of a partial episode") from None


def _flushed_datasets(f: h5py.File, path: Path, n: int) -> dict[str, h5py.Dataset]:
    """The datasets of ``f`` once each is known to keep its data in this file, with at least
    the rows of ``n`` steps, declaring no more than the file stores up to there."""
    datasets = checked_datasets(f, path, kept_length=n)
    groups = {name.split("/")[0] for name in datasets}
    for name in REQUIRED_DATASETS:
        if name not in groups:
            raise EpisodeError(path, name, "expected this dataset, it is missing")
    for name, ds in datasets.items():
        offset = LENGTH_OFFSETS.get(name.split("/")[0])
        if offset is not None and (not ds.shape or ds.shape[0] < n + offset):
            got = ds.shape[0] if ds.shape else "a scalar"
            raise EpisodeError(
                path, name, f"expected at least {n + offset} rows (flushed_steps {n}), got {got}"
            )
    return datasets


def _cut(tmp: Path, n: int) -> None:
    """Cut ``tmp``, a copy of a checked ``.partial``, to ``n`` steps and mark it recovered
    (its links are checked again before any dataset is opened)."""
    f = open_h5(tmp, "r+")
    try:
        _cut_open(f, tmp, n)
    except BaseException:
        _h5.let_go(f)  # a full disk: never leave HDF5 a file it cannot close
        raise
    f.close()


def _cut_open(f: h5py.File, tmp: Path, n: int) -> None:
    with guard(tmp, None):  # reading: what h5py raises here is damage
        datasets = _flushed_datasets(f, tmp, n)
        rewards = np.asarray(read_rows(datasets["rewards"], slice(0, n)), dtype=np.float64)
        terminated = bool(datasets["terminations"][n - 1])
    for name, ds in datasets.items():  # writing: what fails here is the disk
        offset = LENGTH_OFFSETS.get(name.split("/")[0])
        if offset is not None:
            ds.resize(n + offset, axis=0)
    _h5.write_attrs(
        f,
        {
            "length": n,
            "total_return": float(running_returns(rewards)[-1]),  # inf past float64
            "terminated": terminated,
            "truncated": True,
            "recovered": True,
        },
    )
    f.flush()


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

"""Trimming an episode to a range, into a new file that still verifies by re-simulation.

A range is given in frames, as everywhere in the viewer and in ``export``: frame 0 is the
reset, frame ``t + 1`` follows step ``t``. Frames ``A..B`` (inclusive) are steps ``A..B-1``,
so the new episode has ``B - A`` steps and its observation 0 is the source's observation
``A``.

A trimmed file keeps the source's reset seed and says how to get from that reset to its
first observation:

* root attribute ``trim`` (JSON): ``{"source": "<file name>", "start": A, "end": B}``; a file
  trimmed again names the first source and the start within it;
* dataset ``trim_prefix/actions`` (``start``, ...) (a group for Dict / Tuple action spaces,
  laid out like ``actions``): the actions taken before the first step.

``verify`` resets with the seed, replays the prefix without comparing (:func:`replay_prefix`)
and compares from there. The notes name the source and the range.

Idle steps (``--idle`` cuts the runs of them at the start and the end of the range; never the
terminating step, and at least one step stays):

* a keyboard recording with its keys: no key held, and a reward <= 0 (nothing gained);
* else an env whose action meanings name ``NOOP`` (ALE): that action, reward <= 0;
* else: the same action as the step at that end of the range, with reward exactly 0 (an
  action held while nothing happens; under a step penalty, as in MountainCar, a held action
  is play, not idling).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import h5py
import numpy as np

from . import _h5
from .reader import EpisodeFile, running_returns
from .schema import LENGTH_OFFSETS, PARTIAL_SUFFIX, SUFFIX, EpisodeError
from .spaces import index_nested

PREFIX_GROUP = "trim_prefix"
PER_STEP = {**LENGTH_OFFSETS, "actors": 0}
"""Top-level datasets / groups copied row by row, with their length relative to T (``actors``:
who acted)."""
COPY_BYTES = 16 << 20
"""Rows are copied in blocks of at most this many bytes (memory stays bounded)."""
PREFIX_BLOCK = 4096
"""Prefix actions are read this many at a time while replaying them."""


class TrimResult(NamedTuple):
    path: Path
    start: int
    """First frame of the source kept (the new frame 0)."""
    end: int
    """Last frame of the source kept."""
    idle_cut: tuple[int, int]
    """Idle steps cut at the start and at the end (``--idle``)."""

    @property
    def length(self) -> int:
        return self.end - self.start


# ---- idle steps ------------------------------------------------------------------------------


def _action_rows(ep: EpisodeFile) -> np.ndarray:
    """[T, K] the actions as rows (every leaf flattened), for comparing steps."""
    n = ep.summary.length
    parts = []
    for _, ds in _datasets(ep.h5, "actions"):
        parts.append(np.asarray(ds[()]).reshape(n, -1))
    return np.concatenate(parts, axis=1) if parts else np.zeros((n, 0))


def _idle_masks(ep: EpisodeFile, a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
    """[b - a] bool twice: steps ``a..b-1`` that are idle when counted from the start of the
    range, and when counted from its end (see the module docstring)."""
    s = ep.summary
    scalars = ep.scalars()
    quiet = (scalars.rewards[a:b] <= 0) & ~scalars.terminations[a:b]
    keys = ep.h5.get("keys")
    if s.controller == "keyboard" and isinstance(keys, h5py.Dataset) and keys.shape == (s.length,):
        held = np.array([len(k) > 2 for k in keys[a:b]], dtype=bool)  # "[]": nothing held
        return quiet & ~held, quiet & ~held
    rows = _action_rows(ep)[a:b]
    if s.action_meanings and "NOOP" in s.action_meanings and rows.shape[1] == 1:
        noop = rows[:, 0] == s.action_meanings.index("NOOP")
        return quiet & noop, quiet & noop
    if len(rows) == 0:
        return quiet, quiet
    # A held action is idle only when it gains and costs nothing (a step penalty means the
    # env counts it, and a policy holding an action on purpose is not idle).
    still = (scalars.rewards[a:b] == 0) & ~scalars.terminations[a:b]
    return still & np.all(rows == rows[0], axis=1), still & np.all(rows == rows[-1], axis=1)


def _leading(mask: np.ndarray) -> int:
    busy = np.flatnonzero(~mask)
    return int(busy[0]) if busy.size else len(mask)


def idle_runs(ep: EpisodeFile, start: int = 0, end: int | None = None) -> tuple[int, int]:
    """How many idle steps open and close steps ``start..end-1`` (default: the episode); at
    least one step is never idle."""
    end = ep.summary.length if end is None else end
    n = end - start
    if n <= 0:
        return 0, 0
    lead_mask, trail_mask = _idle_masks(ep, start, end)
    lead = min(_leading(lead_mask), n - 1)
    trail = min(_leading(trail_mask[::-1]), n - 1 - lead)
    return lead, trail


# ---- copying -------------------------------------------------------------------------------


def _datasets(group: h5py.Group, name: str, prefix: str = "") -> Iterator[tuple[str, h5py.Dataset]]:
    """(relative name, dataset) of ``group[name]`` and everything under it, following hard
    links only (a soft or external link is a schema error: never read outside the file)."""
    link = group.get(name, getlink=True)
    path = f"{prefix}{name}"
    if link is None:
        raise EpisodeError(group.file.filename, path, "expected this dataset, it is missing")
    if not isinstance(link, h5py.HardLink):
        raise EpisodeError(group.file.filename, path, "expected a dataset or group, got a link")
    obj = group[name]
    if isinstance(obj, h5py.Dataset):
        yield path, obj
    elif isinstance(obj, h5py.Group):
        for key in sorted(obj):
            yield from _datasets(obj, key, path + "/")


def _create_like(dst: h5py.File, name: str, src: h5py.Dataset, rows: int) -> h5py.Dataset:
    kwargs: dict[str, Any] = {}
    if src.chunks is not None:
        kwargs["chunks"] = src.chunks
        kwargs["maxshape"] = (None, *src.shape[1:])
        if src.compression:
            kwargs["compression"] = src.compression
            kwargs["compression_opts"] = src.compression_opts
        kwargs["shuffle"] = src.shuffle
    if h5py.check_string_dtype(src.dtype) is None and src.dtype.kind != "O":
        kwargs["fillvalue"] = src.fillvalue
    return dst.create_dataset(name, shape=(rows, *src.shape[1:]), dtype=src.dtype, **kwargs)


def _copy_rows(src: h5py.Dataset, out: h5py.Dataset, lo: int, hi: int, at: int = 0) -> None:
    """Copy ``src[lo:hi]`` to ``out[at:]``: raw compressed chunks when the layout is one row per
    chunk (frames: no re-compression), else in blocks of at most :data:`COPY_BYTES`."""
    n = hi - lo
    if n <= 0:
        return
    one_row_chunks = src.chunks == (1, *src.shape[1:]) and out.chunks == src.chunks
    if one_row_chunks and src.compression == out.compression and at == 0:
        zeros = (0,) * (len(src.shape) - 1)
        try:
            for i in range(n):
                mask, raw = src.id.read_direct_chunk((lo + i, *zeros))
                out.id.write_direct_chunk((i, *zeros), raw, mask)
            return
        except (OSError, ValueError, KeyError):  # an unwritten chunk: copy values instead
            pass
    row_bytes = max(1, int(np.prod(src.shape[1:], dtype=np.int64)) * max(src.dtype.itemsize, 1))
    block = max(1, COPY_BYTES // row_bytes)
    for start in range(lo, hi, block):
        stop = min(start + block, hi)
        out[at + start - lo : at + stop - lo] = src[start:stop]


def _source_trim(path: Path, attrs: dict[str, Any]) -> tuple[str, int]:
    """(first source's name, start within it) of a file that may itself be trimmed."""
    trim = attrs.get("trim")
    if trim is None:
        return path.name, 0
    start = trim.get("start") if isinstance(trim, dict) else None
    if not isinstance(start, int) or isinstance(start, bool) or start < 0:
        raise EpisodeError(path, "trim", f"expected {{'source', 'start', 'end'}}, got {trim!r:.80}")
    return str(trim.get("source", "?")), start


def _write_prefix(src_ep: EpisodeFile, dst: h5py.File, start: int, old_start: int) -> None:
    """``trim_prefix/actions``: the source's own prefix, then its first ``start`` actions."""
    f = src_ep.h5
    total = old_start + start
    if total == 0:
        return
    old = dict(_datasets(f, f"{PREFIX_GROUP}/actions")) if old_start else {}
    for name, ds in _datasets(f, "actions"):
        target = f"{PREFIX_GROUP}/{name}"
        out = _create_like(dst, target, ds, total)
        if old_start:
            before = old.get(f"{PREFIX_GROUP}/{name}")
            if before is None or before.shape[:1] != (old_start,):
                raise EpisodeError(
                    src_ep.path, target, f"expected {old_start} prefix actions (trim.start)"
                )
            _copy_rows(before, out, 0, old_start)
        _copy_rows(ds, out, 0, start, at=old_start)


def default_trim_output(path: Path, start: int, end: int, folder: Path | None = None) -> Path:
    """``<name>_trim<start>-<end>.h5`` in ``folder``, else beside the source."""
    name = f"{path.name.removesuffix(SUFFIX)}_trim{start}-{end}{SUFFIX}"
    return (path.parent if folder is None else Path(folder)) / name


def _resolve(index: int | None, default: int, n_frames: int, what: str, path: Path) -> int:
    value = default if index is None else int(index)
    if value < 0:
        value += n_frames
    if not 0 <= value < n_frames:
        raise EpisodeError(path, what, f"expected a frame in 0..{n_frames - 1}, got {index}")
    return value


def trim_episode(
    path: str | os.PathLike,
    *,
    start: int | None = None,
    end: int | None = None,
    idle: bool = False,
    out: str | os.PathLike | None = None,
    out_folder: str | os.PathLike | None = None,
) -> TrimResult:
    """Write frames ``start..end`` (inclusive; negative counts from the end; default: the
    whole episode) of ``path`` as a new episode; ``idle`` also cuts the idle runs at both
    ends of the range. ``out`` defaults to :func:`default_trim_output` (in ``out_folder``
    when given) and must not exist."""
    path = Path(path)
    with EpisodeFile(path) as ep:
        ep.check_lengths()
        s = ep.summary
        n_frames = s.length + 1
        a = _resolve(start, 0, n_frames, "start", path)
        b = _resolve(end, s.length, n_frames, "end", path)
        if b <= a:
            raise EpisodeError(path, "end", f"expected an end frame after start {a}, got {b}")
        cut = (0, 0)
        if idle:
            cut = idle_runs(ep, a, b)
            a, b = a + cut[0], b - cut[1]
        target = Path(out) if out is not None else default_trim_output(path, a, b, out_folder)
        if not target.name.endswith(SUFFIX):
            raise EpisodeError(target, None, f"expected an output name ending in {SUFFIX}")
        if target.exists():
            raise EpisodeError(target, None, "expected a new file, it already exists")
        source, old_start = _source_trim(path, s.attrs)
        partial = target.with_name(target.name.removesuffix(SUFFIX) + PARTIAL_SUFFIX)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            with h5py.File(partial, "w") as dst:
                _write_episode(ep, dst, a, b, source, old_start)
            _h5.fsync_path(partial)
            os.replace(partial, target)
            _h5.fsync_dir(target.parent)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
    return TrimResult(target, a, b, cut)


def _write_episode(
    ep: EpisodeFile, dst: h5py.File, a: int, b: int, source: str, old_start: int
) -> None:
    f, s = ep.h5, ep.summary
    linked = (
        isinstance(f.get("frames"), h5py.Dataset)
        and isinstance(f.get("observations"), h5py.Dataset)
        and f["frames"] == f["observations"]
    )
    for top, offset in PER_STEP.items():
        if top not in f or (linked and top == "observations"):
            continue
        for name, ds in _datasets(f, top):
            out = _create_like(dst, name, ds, b - a + offset)
            _copy_rows(ds, out, a, b + offset)
    if linked:
        dst["observations"] = dst["frames"]  # image observations stored once, as the source
    _write_prefix(ep, dst, a, old_start)
    rewards = f["rewards"][a:b].astype(np.float64)
    terms = f["terminations"][a:b].astype(bool)
    truncs = f["truncations"][a:b].astype(bool)
    first = old_start + a
    note = f"trimmed from {source}, frames {first}..{old_start + b}"
    attrs = {key: f.attrs[key] for key in f.attrs if key != "flushed_steps"}
    for key, value in attrs.items():
        dst.attrs[key] = value  # JSON text, copied as is
    _h5.write_attrs(
        dst,
        {
            "length": b - a,
            "total_return": float(running_returns(rewards)[-1]),
            "terminated": bool(terms[-1]),
            "truncated": bool(truncs[-1]) or (b < s.length and not bool(terms[-1])),
            "trim": {"source": source, "start": first, "end": old_start + b},
            "notes": note + (f"\n{s.notes}" if s.notes else ""),
        },
    )


# ---- verification ----------------------------------------------------------------------------


def replay_prefix(env: Any, ep: EpisodeFile, obs: Any) -> tuple[Any, str | None]:
    """Step ``env`` (just reset with the file's seed) through a trimmed file's prefix actions.
    Returns (the observation its first step starts from, None), or (obs, what went wrong)
    when the env ended during the prefix. A file that was not trimmed is left as it is."""
    s = ep.summary
    if "trim" not in s.attrs:
        return obs, None
    _, start = _source_trim(ep.path, s.attrs)
    if start == 0:
        return obs, None
    group = f"{PREFIX_GROUP}/actions"
    for name, ds in _datasets(ep.h5, group):
        if ds.shape[:1] != (start,):
            got = ds.shape[0] if ds.shape else "a scalar"
            raise EpisodeError(ep.path, name, f"expected {start} actions (trim.start), got {got}")
    for lo in range(0, start, PREFIX_BLOCK):
        block = ep._leaf_read(group, s.action_space, slice(lo, min(lo + PREFIX_BLOCK, start)))
        for i in range(min(PREFIX_BLOCK, start - lo)):
            action = index_nested(block, i)
            if isinstance(action, np.ndarray) and action.shape == ():
                action = action.item()
            obs, _, term, trunc, _ = env.step(action)
            if term or trunc:
                return obs, f"the env ended at prefix step {lo + i} of {start}"
    return obs, None

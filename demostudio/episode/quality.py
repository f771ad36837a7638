"""Demo quality: per-episode facts and the flags that say which files need a look.

Per episode: length, return, the idle runs at the start and the end (as
:mod:`~demostudio.episode.trim` defines idle), the action histogram (Discrete actions), who
acted (the person's share of the steps and the number of take-overs), a digest of what was
played and, when asked, verification by re-simulation.

Across a folder, per env id (trimmed pieces and episodes a person ended early left out):
outliers of return and length by the
robust z-score ``0.6745 * (x - median) / MAD`` (|z| > :data:`OUTLIER_Z`, Iglewicz and
Hoaglin; when the MAD is 0 the mean absolute deviation times 1.2533 stands in), at least
:data:`MIN_GAP` of the median away, with at least :data:`MIN_FOR_OUTLIERS` episodes; and
identical duplicates (same env, seed, reset options and actions, hence the same episode):
every copy after the first is flagged.

Each flag comes with the command a person would run next, as in the window:

* idle at the start or the end: ``demostudio trim FILE --idle`` cuts it off; an episode idle
  for nearly all its steps (trimming would keep under :data:`MOSTLY_IDLE_KEEP` of it, or
  fewer than :data:`IDLE_FLAG_STEPS` steps) has nothing to keep: ``tag --add bad``;
* ended early with End (or by closing the window) before the env ended it: its return and
  length say when the person stopped, not how well they played, so it is left out of the
  outliers and flagged ``ended-early`` with ``demostudio replay FILE`` to look whether it is
  worth keeping;
* a return far below the others, far fewer steps, a duplicate or a diverging replay:
  ``tag --add bad``; a return far above the others: ``verify`` (is it real?); far more
  steps: ``trim --idle`` where it has idle ends, else ``replay`` to look."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

import h5py
import numpy as np
from gymnasium import spaces as gym_spaces

from .actors import person_mask
from .reader import EpisodeFile, find_episodes
from .schema import EpisodeError
from .trim import _datasets, idle_runs

OUTLIER_Z = 3.5
MIN_FOR_OUTLIERS = 5
MIN_GAP = 0.25
"""An outlier also differs from the median by at least this share of the median's size (so
near-identical episodes, with a tiny MAD, are not flagged for a few steps' difference)."""
LISTED_ACTIONS = 256
"""Discrete actions are all listed up to this many choices (beyond, only those taken)."""
IDLE_FLAG_STEPS = 10
"""An idle run is flagged when it is at least this many steps..."""
IDLE_FLAG_SHARE = 0.05
"""...and at least this share of the episode."""
MOSTLY_IDLE_KEEP = 0.1
"""An episode whose non-idle steps are under this share of it is mostly idle: tagged bad,
not trimmed."""


class Flag(NamedTuple):
    kind: str
    """``idle-start``, ``idle-end``, ``mostly-idle``, ``ended-early``, ``return-low``,
    ``return-high``, ``length-short``, ``length-long``, ``duplicate``, ``diverges``,
    ``unreadable``."""
    detail: str
    command: str
    """A ready-to-run command that deals with it ("" when there is nothing to run)."""


@dataclass(frozen=True)
class EpisodeQuality:
    path: Path
    env_id: str = ""
    length: int = 0
    total_return: float = 0.0
    idle_start: int = 0
    """Idle steps that open the episode."""
    idle_end: int = 0
    """Idle steps that close it."""
    human_share: float = 0.0
    """Share of the steps a person took."""
    takeovers: int = 0
    """Agent-to-person switches."""
    trimmed: bool = False
    """A piece of another episode (``demostudio trim``): left out of the outlier statistics."""
    ended_early: bool = False
    """A person ended it (End, or closing the window) before the env did: saved truncated
    though its last step neither terminated nor truncated. Left out of the outliers."""
    actions: dict[str, int] | None = None
    """Discrete actions: how often each was taken (by name where the env names them)."""
    digest: str = ""
    """SHA-256 of env id, seed, reset options and actions."""
    verified: bool | None = None
    """True / False with ``verify``; None when not verified."""
    verify_detail: str = ""
    error: str | None = None
    """Why the file could not be read (the other fields are then empty)."""
    flags: tuple[Flag, ...] = field(default=())

    @property
    def idle_share(self) -> tuple[float, float]:
        n = max(self.length, 1)
        return self.idle_start / n, self.idle_end / n

    def as_json(self) -> dict[str, Any]:
        start, end = self.idle_share
        return {
            "path": str(self.path),
            "env_id": self.env_id,
            "length": self.length,
            "return": self.total_return,
            "idle_start_steps": self.idle_start,
            "idle_end_steps": self.idle_end,
            "idle_start_share": round(start, 4),
            "idle_end_share": round(end, 4),
            "human_share": round(self.human_share, 4),
            "takeovers": self.takeovers,
            "trimmed": self.trimmed,
            "ended_early": self.ended_early,
            "actions": self.actions,
            "digest": self.digest,
            "verified": self.verified,
            "verify_detail": self.verify_detail,
            "error": self.error,
            "flags": [f._asdict() for f in self.flags],
        }


# ---- one episode -------------------------------------------------------------------------------


def person_steps(ep: EpisodeFile) -> np.ndarray:
    """[T] bool: the steps a person took (the file's ``actors``, checked on read; a file
    without them was played wholly by its ``controller``, and a keyboard is a person)."""
    acted = ep.actors
    return person_mask(acted.actors, acted.names)


def _takeovers(person: np.ndarray) -> int:
    return int(np.count_nonzero(~person[:-1] & person[1:]))


def ended_early(ep: EpisodeFile) -> bool:
    """The episode was cut short by its player, not by the env (see EpisodeQuality)."""
    s = ep.summary
    if not s.truncated or s.terminated or s.length == 0:
        return False
    last = ep.scalars()
    return not (bool(last.terminations[-1]) or bool(last.truncations[-1]))


def _histogram(ep: EpisodeFile) -> dict[str, int] | None:
    space = ep.summary.action_space
    ds = ep.h5.get("actions")
    if not isinstance(space, gym_spaces.Discrete) or not isinstance(ds, h5py.Dataset):
        return None
    values = ds[()].astype(np.int64).reshape(-1) - int(space.start)
    taken, counts = np.unique(values[(values >= 0) & (values < space.n)], return_counts=True)
    shown = range(int(space.n)) if space.n <= LISTED_ACTIONS else taken.tolist()
    count = dict(zip(taken.tolist(), counts.tolist()))
    meanings = ep.summary.action_meanings
    out = {}
    for i in shown:
        name = str(i + int(space.start))
        if meanings and i < len(meanings):
            name += f" {meanings[i]}"
        out[name] = count.get(i, 0)
    return out


def _digest(ep: EpisodeFile) -> str:
    s = ep.summary
    h = hashlib.sha256()
    head = [s.env_id, s.env_kwargs, s.seed, s.attrs.get("reset_options"), s.attrs.get("trim")]
    h.update(json.dumps(head, sort_keys=True, default=str).encode())
    for name, ds in _datasets(ep.h5, "actions"):
        values = np.ascontiguousarray(ds[()])
        h.update(f"{name}:{values.dtype.str}:{values.shape}".encode())
        h.update(values.tobytes() if values.dtype.kind != "O" else repr(values.tolist()).encode())
    return h.hexdigest()


def episode_quality(path: str | os.PathLike, verify: bool = False) -> EpisodeQuality:
    """The facts of one episode (no flags: those need the folder); an unreadable file gives
    an entry with ``error`` set."""
    path = Path(path)
    try:
        with EpisodeFile(path) as ep:
            ep.check_data()  # what ls and validate refuse is unreadable here too
            s = ep.summary
            lead, trail = idle_runs(ep)
            person = person_steps(ep)
            q = EpisodeQuality(
                path=path,
                env_id=s.env_id,
                length=s.length,
                total_return=s.total_return,
                idle_start=lead,
                idle_end=trail,
                human_share=float(person.mean()) if s.length else 0.0,
                takeovers=_takeovers(person),
                actions=_histogram(ep),
                digest=_digest(ep),
                trimmed="trim" in s.attrs,
                ended_early=ended_early(ep),
            )
    except (EpisodeError, OSError, ValueError, KeyError) as exc:
        return EpisodeQuality(path=path, error=str(exc))
    if verify:
        from .verify import verify_episode  # needs the env: only when asked

        try:
            r = verify_episode(path)
            q = replace(q, verified=r.ok, verify_detail=r.describe())
        except (EpisodeError, OSError, ValueError) as exc:
            q = replace(q, verified=False, verify_detail=str(exc))
    return q


# ---- the folder ----------------------------------------------------------------------------


def robust_z(values: np.ndarray) -> np.ndarray:
    """Modified z-scores ``0.6745 (x - median) / MAD`` (0 where the spread is 0, and where
    ``x`` is within :data:`MIN_GAP` of the median)."""
    values = np.asarray(values, dtype=np.float64)
    med = np.median(values)
    dev = np.abs(values - med)
    mad = np.median(dev)
    if mad > 0:
        z = 0.6745 * (values - med) / mad
    elif np.mean(dev) > 0:
        z = (values - med) / (1.253314 * np.mean(dev))
    else:
        return np.zeros_like(values)
    return np.where(dev >= MIN_GAP * max(abs(med), 1.0), z, 0.0)


def _command(*words: str) -> str:
    return " ".join(shlex.quote(w) for w in words)


def long_idle(steps: int, length: int) -> bool:
    """An idle run of ``steps`` in an episode of ``length`` is long enough to flag."""
    return steps >= IDLE_FLAG_STEPS and steps >= IDLE_FLAG_SHARE * length


def _idle_flags(q: EpisodeQuality, trim_idle: str, tag_bad: str) -> list[Flag]:
    runs = [
        (kind, steps)
        for kind, steps in (("idle-start", q.idle_start), ("idle-end", q.idle_end))
        if long_idle(steps, q.length)
    ]
    if not runs:
        return []
    idle = q.idle_start + q.idle_end
    kept = q.length - idle
    if kept < max(IDLE_FLAG_STEPS, MOSTLY_IDLE_KEEP * q.length):  # trimming keeps nothing
        detail = f"{idle} of {q.length} steps idle: {kept} left to learn from"
        return [Flag("mostly-idle", detail, tag_bad)]
    where = {"idle-start": "opens", "idle-end": "closes"}
    return [Flag(kind, f"{steps} idle steps {where[kind]} it", trim_idle) for kind, steps in runs]


def _flags(q: EpisodeQuality, z_return: float, z_length: float, first: Path | None) -> list[Flag]:
    f = str(q.path)
    tag_bad = _command("demostudio", "tag", f, "--add", "bad")
    trim_idle = _command("demostudio", "trim", f, "--idle")
    replay = _command("demostudio", "replay", f)
    if q.error is not None:
        return [Flag("unreadable", q.error, "")]
    out = _idle_flags(q, trim_idle, tag_bad)
    if q.ended_early:
        detail = (f"its player ended it at step {q.length} (End, or closing the window) before "
                  "the env did: left out of the return and length outliers")  # fmt: skip
        out.append(Flag("ended-early", detail, replay))
    if z_return < -OUTLIER_Z:
        out.append(Flag("return-low", f"return {q.total_return:.4g} far below the others", tag_bad))
    elif z_return > OUTLIER_Z:
        detail = f"return {q.total_return:.4g} far above the others (is it real?)"
        out.append(Flag("return-high", detail, _command("demostudio", "verify", f)))
    if z_length < -OUTLIER_Z:
        out.append(Flag("length-short", f"{q.length} steps, far fewer than the others", tag_bad))
    elif z_length > OUTLIER_Z:
        has_idle = max(q.idle_start, q.idle_end) >= IDLE_FLAG_STEPS
        detail = f"{q.length} steps, far more than the others"
        out.append(Flag("length-long", detail, trim_idle if has_idle else replay))
    if first is not None:
        out.append(Flag("duplicate", f"the same episode as {first.name}", tag_bad))
    if q.verified is False:
        out.append(Flag("diverges", q.verify_detail, tag_bad))
    return out


def flag_episodes(items: Iterable[EpisodeQuality]) -> list[EpisodeQuality]:
    """``items`` with their flags, comparing each with the others of its env id."""
    items = list(items)
    z_return = [0.0] * len(items)
    z_length = [0.0] * len(items)
    by_env: dict[str, list[int]] = defaultdict(list)
    for i, q in enumerate(items):
        if q.error is None and not q.trimmed and not q.ended_early:
            by_env[q.env_id].append(i)
    for members in by_env.values():
        if len(members) < MIN_FOR_OUTLIERS:
            continue
        zr = robust_z(np.array([items[i].total_return for i in members]))
        zl = robust_z(np.array([items[i].length for i in members]))
        for i, a, b in zip(members, zr, zl):
            z_return[i], z_length[i] = float(a), float(b)
    seen: dict[str, Path] = {}
    out = list(items)
    for i in sorted(range(len(items)), key=lambda i: items[i].path):  # the first copy by name
        q = items[i]
        first = seen.get(q.digest) if q.error is None else None
        if q.error is None:
            seen.setdefault(q.digest, q.path)
        out[i] = replace(q, flags=tuple(_flags(q, z_return[i], z_length[i], first)))
    return out


def assess(
    paths: str | os.PathLike | list[str | os.PathLike],
    verify: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> list[EpisodeQuality]:
    """Every episode under ``paths`` (files or folders), with its facts and flags."""
    files = find_episodes(paths)
    items = []
    for n, path in enumerate(files):
        items.append(episode_quality(path, verify=verify))
        if progress is not None:
            progress(n + 1, len(files))
    return flag_episodes(items)

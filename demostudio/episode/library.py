"""A folder of episodes: listing with per-file errors, and validation against the schema."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .envs import spec_differences
from .reader import EpisodeFile, EpisodeSummary, find_episodes, find_partials, running_returns
from .schema import EpisodeError


@dataclass(frozen=True)
class LibraryEntry:
    """One file of a folder: its summary, or the error that stops it from opening."""

    path: Path
    summary: EpisodeSummary | None
    error: str | None
    partial: bool = False


def scan(paths: str | os.PathLike | Iterable[str | os.PathLike]) -> list[LibraryEntry]:
    """Every episode under ``paths`` (files or folders), with unreadable or inconsistent files
    flagged, plus any ``.partial`` left by a crash. Reads metadata, shapes and the small
    per-step datasets (actions, keys), never observations or frames."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = list(paths)
    entries: list[LibraryEntry] = []
    for path in find_episodes(paths):
        try:
            with EpisodeFile(path) as ep:  # checks links, attributes and declared shapes
                ep.check_data()  # actions and keys: small, and what training trips on
                entries.append(LibraryEntry(path, ep.summary, None))
        except EpisodeError as exc:
            entries.append(
                LibraryEntry(
                    path, None, exc.reason if exc.field is None else f"[{exc.field}] {exc.reason}"
                )
            )
    for folder in paths:
        if Path(folder).is_dir():
            for partial in find_partials(folder):
                entries.append(
                    LibraryEntry(partial, None, "left by a crash: run `demostudio recover`", True)
                )
    return entries


def validate(path: str | os.PathLike) -> list[str]:
    """Problems of one episode file against the schema; an empty list means valid.

    Opening checks the links, storage, attributes and declared shapes; the arrays are then
    read (actions against the action space) and the summary compared with them, and the
    stored env spec with the installed registry's (an entry point or wrapper naming other
    code is a problem naming ``env_spec.FIELD``)."""
    path = Path(path)
    try:
        with EpisodeFile(path) as ep:
            return _consistency(ep)
    except EpisodeError as exc:
        return [str(exc)]


def _consistency(ep: EpisodeFile) -> list[str]:
    s, path = ep.summary, ep.path
    problems: list[str] = []
    scalars = ep.scalars()
    ep.check_data()  # actions outside the action space, keys that are not JSON
    terms = scalars.terminations
    total = float(running_returns(scalars.rewards)[-1])  # as the writer sums: inf past float64
    if s.length and not np.isclose(total, s.total_return, atol=1e-6, equal_nan=True):
        problems.append(
            f"{path} [total_return]: expected the sum of rewards {total:g}, got {s.total_return:g}"
        )
    if s.length and bool(terms[-1]) != s.terminated:
        problems.append(
            f"{path} [terminated]: expected {bool(terms[-1])} (last termination), "
            f"got {s.terminated}"
        )
    if np.any(terms[:-1]):
        problems.append(f"{path} [terminations]: a step before the last terminates")
    for key, reason in spec_differences(s.env_id, s.attrs.get("env_spec")):
        problems.append(str(EpisodeError(path, f"env_spec.{key}", reason)))
    return problems


def describe_datasets(ep: EpisodeFile) -> list[tuple[str, tuple[int, ...], str, str]]:
    """(name, shape, dtype, compression) of every dataset in the file."""
    rows = []
    for name, ds in ep.datasets.items():
        comp = ds.compression or "none"
        if ds.compression_opts is not None:
            comp += f"({ds.compression_opts})"
        if ds.chunks:
            comp += f", chunks {ds.chunks}"
        rows.append((name, tuple(ds.shape), str(ds.dtype), comp))
    return rows

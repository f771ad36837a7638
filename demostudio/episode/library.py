"""A folder of episodes: listing with per-file errors, and validation against the schema."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np

from .reader import EpisodeFile, EpisodeSummary, _walk, find_episodes, find_partials
from .schema import EpisodeError
from .spaces import leaves


@dataclass(frozen=True)
class LibraryEntry:
    """One file of a folder: its summary, or the error that stops it from opening."""

    path: Path
    summary: EpisodeSummary | None
    error: str | None
    partial: bool = False


def scan(paths: str | os.PathLike | Iterable[str | os.PathLike]) -> list[LibraryEntry]:
    """Every episode under ``paths`` (files or folders), with unreadable or inconsistent files
    flagged, plus any ``.partial`` left by a crash. Reads metadata and shapes, no arrays."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = list(paths)
    entries: list[LibraryEntry] = []
    for path in find_episodes(paths):
        try:
            with EpisodeFile(path) as ep:
                ep.check_lengths()  # dataset shapes only: cheap, and catches damaged files
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
    """Problems of one episode file against the schema; an empty list means valid."""
    path = Path(path)
    try:
        ep = EpisodeFile(path)
    except EpisodeError as exc:
        return [str(exc)]
    problems: list[str] = []
    with ep:
        try:
            ep.check_lengths()
        except EpisodeError as exc:
            problems.append(str(exc))
        s = ep.summary
        for group, space in (("observations", s.observation_space), ("actions", s.action_space)):
            for leaf in leaves(space):
                name = "/".join((group, *leaf.path))
                obj = ep.h5.get(name)
                if not isinstance(obj, h5py.Dataset):
                    problems.append(f"{path} [{name}]: expected a dataset for this space leaf")
                elif not leaf.is_text and leaf.shape and tuple(obj.shape[1:]) != leaf.shape:
                    problems.append(
                        f"{path} [{name}]: expected values of shape {leaf.shape}, "
                        f"got {tuple(obj.shape[1:])}"
                    )
        if not problems:
            rewards = ep.h5["rewards"][()]
            if s.length and not np.isclose(float(np.sum(rewards)), s.total_return, atol=1e-6):
                problems.append(
                    f"{path} [total_return]: expected the sum of rewards "
                    f"{float(np.sum(rewards)):g}, got {s.total_return:g}"
                )
            terms = ep.h5["terminations"][()]
            if s.length and bool(terms[-1]) != s.terminated:
                problems.append(
                    f"{path} [terminated]: expected {bool(terms[-1])} (last termination), "
                    f"got {s.terminated}"
                )
            if np.any(terms[:-1]):
                problems.append(f"{path} [terminations]: a step before the last terminates")
        if ep.has_frames:
            shape = ep.frame_shape
            if len(shape) != 3 or shape[2] != 3 or ep.h5["frames"].dtype != np.uint8:
                problems.append(f"{path} [frames]: expected (T+1, H, W, 3) uint8, got {shape}")
    return problems


def describe_datasets(ep: EpisodeFile) -> list[tuple[str, tuple[int, ...], str, str]]:
    """(name, shape, dtype, compression) of every dataset in the file."""
    rows = []
    for name, ds in _walk(ep.h5):
        comp = ds.compression or "none"
        if ds.compression_opts is not None:
            comp += f"({ds.compression_opts})"
        if ds.chunks:
            comp += f", chunks {ds.chunks}"
        rows.append((name, tuple(ds.shape), str(ds.dtype), comp))
    return rows

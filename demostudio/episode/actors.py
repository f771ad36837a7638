"""Who acted at each step: a person or a policy (schema version 2).

A file stores the per-step dataset ``actors`` (T,) uint8, an index into the root attribute
``actor_names`` (a JSON list of strings). A person is ``"person:<player>"``; anything else (an
agent, a script: ``"policy:<name>"`` or the controller string) is not a person. Files of
schema version 1 have no ``actors``: every step was taken by the file's ``controller``, and a
``keyboard`` controller is the person ``person:<player>``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import h5py
import numpy as np

from .schema import EpisodeError

PERSON_PREFIX = "person:"
MAX_ACTORS = 256
"""Distinct actors one episode can name (``actors`` is uint8)."""


class Actors(NamedTuple):
    """Who took each step of an episode."""

    actors: np.ndarray
    """[T] uint8, an index into ``names``."""
    names: list[str]
    """The actor names (``person:<player>``, ``policy:<name>``, ...)."""


def default_actor(controller: str, player: str | None) -> str:
    """The actor of a step nobody claimed: the controller, a keyboard being the player."""
    if controller == "keyboard":
        return f"{PERSON_PREFIX}{player or ''}"
    return str(controller)


def is_person(name: str) -> bool:
    return name.startswith(PERSON_PREFIX)


def person_mask(actors: np.ndarray, actor_names: list[str]) -> np.ndarray:
    """[T] bool: which steps a person took (``actors`` [T] indexes ``actor_names``)."""
    people = np.array([is_person(n) for n in actor_names] or [False], dtype=bool)
    return people[np.asarray(actors, dtype=np.intp)]


def _names(path: Path, attrs: dict[str, Any]) -> list[str]:
    if "actor_names" not in attrs:
        raise EpisodeError(path, "actor_names", "expected this attribute with `actors`, missing")
    names = attrs["actor_names"]
    if (
        not isinstance(names, list)
        or not names
        or len(names) > MAX_ACTORS
        or not all(isinstance(n, str) for n in names)
    ):
        shown = repr(names)
        raise EpisodeError(
            path,
            "actor_names",
            f"expected a list of 1 to {MAX_ACTORS} strings, got {shown[:60]}",
        )
    return names


class ActorStats(NamedTuple):
    """What the episode summary says about who acted, read in bounded pieces."""

    names: list[str]
    human_share: float
    takeovers: int


_PIECE = 1 << 20  # rows read at a time: memory stays bounded whatever the file declares


def _dataset(path: Path, f: h5py.File, attrs: dict[str, Any], length: int) -> h5py.Dataset:
    link = f.get("actors", getlink=True)
    if not isinstance(link, h5py.HardLink) or not isinstance(f["actors"], h5py.Dataset):
        raise EpisodeError(path, "actors", "expected a dataset (T,) uint8 in this file")
    ds = f["actors"]
    if ds.dtype != np.uint8 or ds.shape != (length,):
        raise EpisodeError(
            path,
            "actors",
            f"expected ({length},) uint8 (T = {length}), got {ds.shape} {ds.dtype}",
        )
    return ds


def _check_piece(path: Path, piece: np.ndarray, start: int, names: list[str]) -> None:
    if len(piece) and int(piece.max()) >= len(names):
        t = int(np.argmax(piece >= len(names)))
        raise EpisodeError(
            path,
            "actors",
            f"expected indices below {len(names)} (the actor_names), got {int(piece[t])} "
            f"at step {start + t}",
        )


def _version_1(attrs: dict[str, Any]) -> str:
    return default_actor(str(attrs.get("controller", "")), attrs.get("player"))


def actor_stats(path: Path, f: h5py.File, attrs: dict[str, Any], length: int) -> ActorStats:
    """Check who acted in the open file ``f`` (never trusted) and summarize it."""
    if "actor_names" not in attrs and "actors" not in f:  # schema version 1
        name = _version_1(attrs)
        return ActorStats([name], float(is_person(name)) if length else 0.0, 0)
    names = _names(path, attrs)
    ds = _dataset(path, f, attrs, length)
    people = count = switches = 0
    before = None  # whether the step before the current piece was a person's
    for start in range(0, length, _PIECE):
        piece = ds[start : start + _PIECE]
        _check_piece(path, piece, start, names)
        mask = person_mask(piece, names)
        people += int(np.count_nonzero(mask))
        count += len(mask)
        if before is not None:
            mask = np.concatenate([[before], mask])
        switches += int(np.count_nonzero(~mask[:-1] & mask[1:]))
        before = bool(mask[-1])
    return ActorStats(names, people / count if count else 0.0, switches)


def read_actors(path: Path, f: h5py.File, attrs: dict[str, Any], length: int) -> Actors:
    """Who took each of the ``length`` steps of the open file ``f`` (checked, never trusted)."""
    if "actor_names" not in attrs and "actors" not in f:  # schema version 1
        return Actors(np.zeros(length, dtype=np.uint8), [_version_1(attrs)])
    names = _names(path, attrs)
    actors = _dataset(path, f, attrs, length)[()]
    _check_piece(path, actors, 0, names)
    return Actors(actors, names)

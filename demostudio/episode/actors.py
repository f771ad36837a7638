"""Who acted at each step: a person or a policy (schema version 2, issue 15).

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


def human_share(actors: np.ndarray, actor_names: list[str]) -> float:
    """Share of the steps a person took (0.0 for an episode without steps)."""
    if len(actors) == 0:
        return 0.0
    return float(np.mean(person_mask(actors, actor_names)))


def takeovers(actors: np.ndarray, actor_names: list[str]) -> int:
    """How many times a person took over from an agent (agent step followed by a person's)."""
    mask = person_mask(actors, actor_names)
    return int(np.count_nonzero(~mask[:-1] & mask[1:]))


def _names(path: Path, attrs: dict[str, Any]) -> list[str]:
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


def read_actors(path: Path, f: h5py.File, attrs: dict[str, Any], length: int) -> Actors:
    """Who took each of the ``length`` steps of the open file ``f`` (checked, never trusted)."""
    if "actor_names" not in attrs and "actors" not in f:  # schema version 1
        controller = str(attrs.get("controller", ""))
        name = default_actor(controller, attrs.get("player"))
        return Actors(np.zeros(length, dtype=np.uint8), [name])
    if "actor_names" not in attrs:
        raise EpisodeError(path, "actor_names", "expected this attribute with `actors`, missing")
    names = _names(path, attrs)
    ds = f.get("actors", getlink=True)
    if not isinstance(ds, h5py.HardLink) or not isinstance(f["actors"], h5py.Dataset):
        raise EpisodeError(path, "actors", "expected a dataset (T,) uint8 in this file")
    ds = f["actors"]
    if ds.dtype != np.uint8 or ds.shape != (length,):
        raise EpisodeError(
            path,
            "actors",
            f"expected ({length},) uint8 (T = {length}), got {ds.shape} {ds.dtype}",
        )
    actors = ds[()] if length else np.zeros(0, dtype=np.uint8)
    if length and int(actors.max()) >= len(names):
        t = int(np.argmax(actors >= len(names)))
        raise EpisodeError(
            path,
            "actors",
            f"expected indices below {len(names)} (the actor_names), got {int(actors[t])} "
            f"at step {t}",
        )
    return Actors(actors, names)

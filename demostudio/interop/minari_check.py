"""A Minari dataset's HDF5 file read as hostile input, before Minari reads anything in it.

Minari opens ``main_data.hdf5`` with h5py and reads each episode whole, following any link.
So the file goes first through the checks every episode reader uses
(:mod:`demostudio.episode.hostile`: a regular file, no external or soft link, data stored in
this file, nothing declared beyond what it stores), and every episode's datasets must declare
the rows its ``rewards`` say: T steps, T+1 observations and infos. Arrow datasets (no HDF5)
are read by Minari as they are."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import h5py

from demostudio.episode import EpisodeError
from demostudio.episode.attrs import MAX_ATTR_BYTES
from demostudio.episode.hostile import (
    checked_datasets,
    guard,
    hard_linked,
    open_h5,
)
from demostudio.episode.jsonfile import parse_json_text, read_json_file

MAIN_FILE = "main_data.hdf5"
"""Where Minari's HDF5 storage keeps every episode."""
_ROWS = {"observations": 1, "actions": 0, "terminations": 0, "truncations": 0, "infos": 1}
"""Rows of each part of an episode, relative to its number of steps."""


MAX_EPISODES = 10_000_000
"""Most episodes a local dataset's metadata.json may count (Minari makes an index array of
them before reading anything: 80 MB at this count)."""


def check_metadata(data: Path) -> None:
    """Before Minari opens the local dataset folder ``data``: its ``metadata.json`` is a
    regular file of at most 16 MB whose ``total_episodes`` is a count up to
    :data:`MAX_EPISODES` (a hostile count makes Minari allocate an index array of it), and
    which states both spaces: without them Minari makes the env its ``env_spec`` names to
    read them off, importing whatever code that spec names."""
    path = data / "metadata.json"
    meta = read_json_file(path, "a Minari metadata file", MAX_ATTR_BYTES)
    if not isinstance(meta, dict):
        raise EpisodeError(path, None, f"expected a JSON object, got {type(meta).__name__}")
    count = meta.get("total_episodes")
    if not isinstance(count, int) or isinstance(count, bool) or not 0 <= count <= MAX_EPISODES:
        raise EpisodeError(
            path, "total_episodes", f"expected a count from 0 to {MAX_EPISODES}, got {count!r:.60}"
        )
    for key in ("env_spec", "eval_env_spec"):  # JSON in a string: Minari parses it on open
        spec = meta.get(key)
        if spec is not None and not (
            isinstance(spec, str) and isinstance(parse_json_text(spec.encode(), path, key), dict)
        ):
            raise EpisodeError(path, key, "expected the JSON text of an EnvSpec object or null")
    for key in ("observation_space", "action_space"):
        if not isinstance(meta.get(key), str):
            raise EpisodeError(
                path,
                key,
                "expected the serialized space (DemoStudio never makes the env a dataset's "
                f"env_spec names to find it), got {json.dumps(meta.get(key))[:60]}",
            )


def check_minari_file(dataset: Any) -> None:
    """Raise EpisodeError naming the file and the field unless every episode of ``dataset``
    (a ``minari.MinariDataset``) can be read without following a link out of the file or
    reading more than its declared rows."""
    storage = dataset.storage
    if getattr(storage, "FORMAT", None) != "hdf5":
        return
    check_hdf5_episodes(Path(storage.data_path) / MAIN_FILE, dataset.episode_indices)


def check_hdf5_episodes(path: Path, indices: Iterable[int]) -> None:
    """Check the file at ``path`` and the declared shapes of its episodes ``indices``, one
    episode group at a time (the per-file limit on datasets applies to each episode, so a
    dataset of many episodes is not refused for its size)."""
    f = open_h5(path, "r")
    try:
        with guard(path, None):
            for i in indices:
                episode = f"episode_{int(i)}"
                if f.get(episode, getlink=True) is None:  # never follows the link
                    raise EpisodeError(
                        path, episode, "expected this episode (metadata.json counts it), missing"
                    )
                group = hard_linked(f, episode, path, episode)
                if not isinstance(group, h5py.Group):
                    raise EpisodeError(path, episode, "expected a group of datasets, got a dataset")
                found = checked_datasets(group, path, vlen_bytes=True, prefix=episode + "/")
                _check_rows(path, episode, {n.partition("/")[2]: ds for n, ds in found.items()})
    finally:
        f.close()


def _check_rows(path: Path, episode: str, parts: dict[str, h5py.Dataset]) -> None:
    rewards = parts.get("rewards")
    if rewards is None or len(rewards.shape or ()) != 1:
        got = "nothing" if rewards is None else f"shape {rewards.shape}"
        raise EpisodeError(path, f"{episode}/rewards", f"expected one reward per step, got {got}")
    n = rewards.shape[0]
    for part, offset in _ROWS.items():
        names = [name for name in parts if name == part or name.startswith(part + "/")]
        if not names and part != "infos":
            raise EpisodeError(path, f"{episode}/{part}", "expected this dataset, it is missing")
        for name in names:
            shape = parts[name].shape
            got = shape[0] if shape else "a scalar"
            if got != n + offset:
                raise EpisodeError(
                    path, f"{episode}/{name}", f"expected {n + offset} rows, got {got}"
                )

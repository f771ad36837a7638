"""Checking an episode file's declared datasets against the schema and the episode length
(dataset or group, length, value shape, dtype family, integers wide enough for their space,
frame sizes) before any array is read."""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
from gymnasium import spaces as gym_spaces

from .schema import GROUPS, LENGTH_OFFSETS, REQUIRED_DATASETS, EpisodeError
from .spaces import integer_span, leaf_spaces


def _kind(dtype: np.dtype) -> str:
    """A dtype's family: "text", "bool", "int" or "float"."""
    if h5py.check_string_dtype(dtype) is not None:
        return "text"
    return {"b": "bool", "i": "int", "u": "int", "f": "float"}.get(dtype.kind, dtype.str)


# The dtype families each top-level dataset may have (others: any the storage check accepts).
_DATASET_KINDS = {
    "rewards": ("float",),
    "terminations": ("bool", "int"),
    "truncations": ("bool", "int"),
    "timestamps": ("float", "int"),
    "keys": ("text",),
}
# The datasets that hold one value per row (shape (N,)); so do those under ``info_present/``.
_ONE_VALUE = ("rewards", "terminations", "truncations", "timestamps", "keys", "actors")
MAX_FRAME_SIDE = 16384


def check_declared(
    path: Path,
    length: int,
    observation_space: gym_spaces.Space,
    action_space: gym_spaces.Space,
    ds: dict[str, h5py.Dataset],
    f: h5py.Group,
) -> None:
    """Every dataset the schema knows is a dataset (``infos`` and ``info_present`` groups)
    and has its length (relative to T), value shape and dtype family; integer observations
    and actions have a dtype that holds every value of their space. ``ds`` are the checked
    datasets of the file ``f`` (:func:`checked_datasets`); nothing is read."""
    n = length
    for name in LENGTH_OFFSETS:
        if name in ("observations", "actions") or name not in f:  # links checked in ds
            continue
        is_group = isinstance(f[name], h5py.Group)
        if is_group != (name in GROUPS):
            want, got = ("a group", "a dataset") if name in GROUPS else ("a dataset", "a group")
            raise EpisodeError(path, name, f"expected {want}, got {got}")
    groups = {name.split("/")[0] for name in ds}
    for name in REQUIRED_DATASETS:
        if name not in ds and name not in groups:
            raise EpisodeError(path, name, "expected this dataset, it is missing")
    for name, d in ds.items():
        offset = LENGTH_OFFSETS.get(name.split("/")[0])
        if offset is None:
            continue
        if d.shape[:1] != (n + offset,):
            got = d.shape[0] if d.shape else "a scalar"
            raise EpisodeError(path, name, f"expected length {n + offset} (T = {n}), got {got}")
        if d.ndim != 1 and (name in _ONE_VALUE or name.startswith("info_present/")):
            raise EpisodeError(path, name, f"expected shape ({n + offset},), got {d.shape}")
        wanted = _DATASET_KINDS.get(name)
        if wanted and _kind(d.dtype) not in wanted:
            raise EpisodeError(path, name, f"expected {' or '.join(wanted)} values, got {d.dtype}")
    for group, space in (("observations", observation_space), ("actions", action_space)):
        for leaf, sub in leaf_spaces(space):
            name = "/".join((group, *leaf.path))
            d = ds.get(name)
            if d is None:
                raise EpisodeError(
                    path,
                    name,
                    f"expected a dataset for this part of the {group[:-1]} space",
                )
            want = "text" if leaf.is_text else _kind(np.dtype(leaf.dtype))
            if not leaf.is_text and tuple(d.shape[1:]) != leaf.shape:
                raise EpisodeError(
                    path,
                    name,
                    f"expected values of shape {leaf.shape}, got {tuple(d.shape[1:])}",
                )
            got = _kind(d.dtype)
            if got != want and not (want == "float" and got == "int"):
                raise EpisodeError(path, name, f"expected {want} values, got {d.dtype}")
            span = integer_span(sub) if got == "int" else None
            if span is not None and not _holds(d.dtype, span):
                raise EpisodeError(
                    path,
                    name,
                    f"expected integers that hold every value of {sub} ({span[0]}..{span[1]}),"
                    f" got {d.dtype}",
                )
    frames = ds.get("frames")
    if frames is not None and (
        frames.ndim != 4
        or frames.shape[3] != 3
        or frames.dtype != np.uint8
        or not 1 <= min(frames.shape[1:3]) <= max(frames.shape[1:3]) <= MAX_FRAME_SIDE
    ):
        raise EpisodeError(
            path,
            "frames",
            f"expected (T+1, H, W, 3) uint8 with sides from 1 to {MAX_FRAME_SIDE}, "
            f"got {frames.shape} {frames.dtype}",
        )


def _holds(dtype: np.dtype, span: tuple[int, int]) -> bool:
    """Whether integer ``dtype`` holds every whole number from ``span[0]`` to ``span[1]``."""
    info = np.iinfo(dtype)
    return info.min <= span[0] and span[1] <= info.max

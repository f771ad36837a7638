"""Checks and conversions of the values read from an episode file's datasets: finite numbers,
whole-number actions in their space's dtype, JSON cells and key lists."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces as gym_spaces

from .attrs import MAX_JSON_DEPTH, json_depth
from .schema import EpisodeError
from .spaces import index_path, leaves, unflatten_batch


def _check_finite(path: Path, name: str, values: Any, first: int, batch: bool = True) -> None:
    """EpisodeError naming ``name`` and the row when float ``values`` hold NaN or infinity
    (``values``: rows from ``first`` on, or with ``batch`` false the one row ``first``)."""
    values = np.asarray(values)
    if values.dtype.kind != "f":
        return
    bad = ~np.isfinite(values)
    if not bad.any():
        return
    if batch:
        first += int(np.argmax(bad.reshape(bad.shape[0], -1).any(axis=1)))
    raise EpisodeError(path, name, f"row {first}: expected finite numbers, got {values[bad][0]}")


def _widened(space: gym_spaces.Space, values: Any) -> Any:
    """``values`` ([T, ...] per leaf) with each whole-number leaf in the space's own dtype
    when that holds every value of the stored one (uint8 actions become int64, so an env's
    ``action - 1`` cannot wrap around)."""
    arrays = {}
    for leaf in leaves(space):
        arr = index_path(values, leaf.path)
        if (
            not leaf.is_text
            and arr.dtype.kind in "biu"
            and np.can_cast(arr.dtype, np.dtype(leaf.dtype), "safe")
        ):
            arr = arr.astype(leaf.dtype)
        arrays[leaf.path] = arr
    return unflatten_batch(space, arrays)


def _json_cell(value: Any) -> Any:
    text = value.decode("utf-8") if isinstance(value, bytes) else value
    if isinstance(text, str) and json_depth(text) <= MAX_JSON_DEPTH:
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            pass
    return text


def _key_list(raw: Any) -> list[str]:
    value = _json_cell(raw)
    if not isinstance(value, list) or not all(isinstance(k, str) for k in value):
        raise ValueError(f"expected a JSON list of key names, got {str(raw)[:60]!r}")
    return value

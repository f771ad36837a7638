"""Values between DemoStudio's episode layout and Minari's: nested infos, text leaves, and the
comparison used when re-simulating an imported episode."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces


def to_minari(space: spaces.Space, value: Any) -> Any:
    """A batched value of ``space`` (as our reader returns it) in Minari's buffer layout:
    dicts for Dict spaces, tuples for Tuple spaces, ``list[str]`` for Text, arrays otherwise."""
    if isinstance(space, spaces.Dict):
        return {k: to_minari(s, value[k]) for k, s in space.spaces.items()}
    if isinstance(space, spaces.Tuple):
        return tuple(to_minari(s, v) for s, v in zip(space.spaces, value))
    if isinstance(space, spaces.Text):
        return [text(v) for v in value]
    return np.asarray(value)


def text(value: Any) -> str:
    """An HDF5 string element (bytes or str) as str."""
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def rows(value: Any) -> int:
    """The length of the time axis of a batched (possibly nested) value; -1 if it has none."""
    if isinstance(value, dict):
        lengths = {rows(v) for v in value.values()}
    elif isinstance(value, tuple):
        lengths = {rows(v) for v in value}
    else:
        return len(value) if hasattr(value, "__len__") else -1
    return lengths.pop() if len(lengths) == 1 else -1


def nest(flat: dict[str, Any]) -> dict[str, Any]:
    """``{"a/b": x}`` -> ``{"a": {"b": x}}`` (our flattened info names to nested dicts)."""
    out: dict[str, Any] = {}
    for name, value in flat.items():
        *parents, leaf = name.split("/")
        node = out
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = value
    return out


def flatten(nested: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """The inverse of :func:`nest`."""
    out: dict[str, Any] = {}
    for key, value in nested.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, name + "/"))
        else:
            out[name] = value
    return out


def info_column(values: Any) -> np.ndarray | list[str]:
    """One stored info column as Minari stores it: numbers as arrays, text as ``list[str]``."""
    arr = np.asarray(values)
    if arr.dtype.kind in "OSU":
        return [text(v) for v in arr.reshape(-1)]
    return arr


def info_row(columns: dict[str, Any], present: dict[str, np.ndarray], i: int) -> dict[str, Any]:
    """The info dict of row ``i`` from flat columns, leaving out keys absent on that row."""
    row: dict[str, Any] = {}
    for name, column in columns.items():
        mask = present.get(name)
        if mask is not None and not bool(mask[i]):
            continue
        value = column[i]
        if isinstance(value, (bytes, str)):
            value = text(value)
        row[name] = value
    return nest(row)


def plain_action(action: Any) -> Any:
    """A 0-d array action as a Python scalar (what ``env.step`` expects for Discrete)."""
    if isinstance(action, np.ndarray) and action.shape == ():
        return action.item()
    return action

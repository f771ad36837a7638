"""Gymnasium spaces to JSON and back, and the leaf layout used to store their values.

Supported: Box, Discrete, MultiDiscrete, MultiBinary, Text, and Dict / Tuple of those (nested).
Values of a composite space are stored as one dataset per leaf, at a path made of the Dict
keys and Tuple indices (``observations/image``, ``actions/0``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from .schema import MAX_DISCRETE_N

_TEXT_DTYPE = "text"
_PRINTABLE = "".join(chr(c) for c in range(32, 127))


def _is_text_like(space: spaces.Space) -> bool:
    """A non-standard space whose values are strings (MiniGrid's MissionSpace)."""
    if isinstance(space, (spaces.Text, spaces.Dict, spaces.Tuple)):
        return False
    dtype = getattr(space, "dtype", None)
    return dtype is str or (dtype is not None and np.dtype(dtype).kind == "U")


def _encode_number(x: float) -> float | str:
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def _encode_bound(arr: np.ndarray) -> Any:
    """A Box bound as a scalar when uniform (the common case), else a nested list."""
    flat = arr.reshape(-1)
    if flat.size and np.all(flat == flat[0]):
        return _encode_number(flat[0].item())
    return [_encode_number(v) for v in flat.tolist()]


MAX_LEAF_ELEMENTS = 1 << 24
"""Most numbers one value of a space may have (an Atari frame has 100,800)."""
_NUMERIC_KINDS = "biuf"


def _decode_bound(value: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """A Box bound: a list gives an array of ``shape``, a scalar stays a scalar (Box fills)."""
    if isinstance(value, list):
        return np.array([float(v) for v in value], dtype=np.float64).reshape(shape).astype(dtype)
    return dtype.type(float(value)) if dtype.kind == "f" else float(value)


def _checked_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    if any(d < 0 for d in shape) or math.prod(shape) > MAX_LEAF_ELEMENTS:
        raise ValueError(f"expected a shape of at most {MAX_LEAF_ELEMENTS} values, got {shape}")
    return shape


def _checked_n(n: Any) -> int:
    """A Discrete space's number of choices: 1 to :data:`MAX_DISCRETE_N`."""
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_DISCRETE_N:
        raise ValueError(f"expected a Discrete n from 1 to {MAX_DISCRETE_N}, got {n!r:.40}")
    return n


def _numeric_dtype(text: Any) -> np.dtype:
    dtype = np.dtype(str(text))
    if dtype.kind not in _NUMERIC_KINDS or dtype.itemsize > 16:
        raise ValueError(f"expected a numeric dtype, got {dtype}")
    return dtype


def space_to_json(space: spaces.Space) -> dict[str, Any]:
    """A JSON-able description of ``space``; raises TypeError for unsupported spaces."""
    if isinstance(space, spaces.Box):
        return {
            "type": "Box",
            "shape": list(space.shape),
            "dtype": np.dtype(space.dtype).str,
            "low": _encode_bound(space.low),
            "high": _encode_bound(space.high),
        }
    if isinstance(space, spaces.Discrete):
        if not 1 <= int(space.n) <= MAX_DISCRETE_N:  # a file no reader would open
            raise TypeError(f"expected a Discrete space of at most {MAX_DISCRETE_N}, got {space}")
        return {"type": "Discrete", "n": int(space.n), "start": int(space.start)}
    if isinstance(space, spaces.MultiDiscrete):
        return {
            "type": "MultiDiscrete",
            "nvec": space.nvec.tolist(),
            "start": space.start.tolist(),
            "dtype": np.dtype(space.dtype).str,
        }
    if isinstance(space, spaces.MultiBinary):
        n = space.n
        return {"type": "MultiBinary", "n": list(n) if not isinstance(n, int) else n}
    if isinstance(space, spaces.Text):
        return {
            "type": "Text",
            "min_length": int(space.min_length),
            "max_length": int(space.max_length),
            "charset": "".join(sorted(space.character_set)),
        }
    if _is_text_like(space):  # e.g. MiniGrid's MissionSpace: free text, stored as Text
        return {
            "type": "Text",
            "min_length": 0,
            "max_length": 4096,
            "charset": _PRINTABLE,
            "origin": type(space).__name__,
        }
    if isinstance(space, spaces.Dict):
        return {"type": "Dict", "spaces": {k: space_to_json(s) for k, s in space.spaces.items()}}
    if isinstance(space, spaces.Tuple):
        return {"type": "Tuple", "spaces": [space_to_json(s) for s in space.spaces]}
    raise TypeError(
        f"expected a Box, Discrete, MultiDiscrete, MultiBinary, Text, Dict or Tuple space, "
        f"got {type(space).__name__}"
    )


def space_from_json(data: Any) -> spaces.Space:
    """The space described by :func:`space_to_json`'s output; ValueError when malformed."""
    if not isinstance(data, dict) or "type" not in data:
        raise ValueError(f"expected an object with a 'type' key, got {data!r:.80}")
    kind = data["type"]
    try:
        if kind == "Box":
            shape = _checked_shape(tuple(int(v) for v in data["shape"]))
            dtype = _numeric_dtype(data["dtype"])
            low = _decode_bound(data["low"], shape, dtype)
            high = _decode_bound(data["high"], shape, dtype)
            return spaces.Box(low=low, high=high, shape=shape, dtype=dtype)
        if kind == "Discrete":
            return spaces.Discrete(_checked_n(data["n"]), start=int(data.get("start", 0)))
        if kind == "MultiDiscrete":
            nvec = np.array(data["nvec"], dtype=np.int64)
            _checked_shape(nvec.shape)
            return spaces.MultiDiscrete(
                nvec,
                dtype=_numeric_dtype(data.get("dtype", "<i8")),
                start=np.array(data["start"], dtype=np.int64) if "start" in data else None,
            )
        if kind == "MultiBinary":
            n = data["n"]
            _checked_shape(tuple(n) if isinstance(n, list) else (int(n),))
            return spaces.MultiBinary(n)
        if kind == "Text":
            return spaces.Text(
                max_length=int(data["max_length"]),
                min_length=int(data["min_length"]),
                charset=data["charset"],
            )
        if kind == "Dict":
            return spaces.Dict({k: space_from_json(v) for k, v in data["spaces"].items()})
        if kind == "Tuple":
            return spaces.Tuple([space_from_json(v) for v in data["spaces"]])
    except (KeyError, TypeError, AttributeError, OverflowError, AssertionError) as exc:
        raise ValueError(f"malformed {kind} space description: missing or bad {exc}") from None
    raise ValueError(
        f"expected space type Box, Discrete, MultiDiscrete, MultiBinary, Text, Dict or Tuple, "
        f"got {kind!r}"
    )


@dataclass(frozen=True)
class Leaf:
    """One stored array of a (possibly composite) space's values."""

    path: tuple[str, ...]
    """Dict keys / Tuple indices from the space's root to this leaf."""
    shape: tuple[int, ...]
    """Shape of one value (without the time axis)."""
    dtype: str
    """numpy dtype string, or ``"text"`` for Text spaces."""

    @property
    def is_text(self) -> bool:
        return self.dtype == _TEXT_DTYPE


def leaves(space: spaces.Space, prefix: tuple[str, ...] = ()) -> list[Leaf]:
    """The leaves of ``space`` in a fixed order."""
    if isinstance(space, spaces.Dict):
        return [leaf for k, s in space.spaces.items() for leaf in leaves(s, (*prefix, k))]
    if isinstance(space, spaces.Tuple):
        return [leaf for i, s in enumerate(space.spaces) for leaf in leaves(s, (*prefix, str(i)))]
    if isinstance(space, spaces.Text) or _is_text_like(space):
        return [Leaf(prefix, (), _TEXT_DTYPE)]
    if isinstance(space, spaces.Discrete):
        return [Leaf(prefix, (), np.dtype(np.int64).str)]
    if isinstance(space, (spaces.Box, spaces.MultiDiscrete, spaces.MultiBinary)):
        return [Leaf(prefix, tuple(space.shape), np.dtype(space.dtype).str)]
    raise TypeError(f"expected a supported space, got {type(space).__name__}")


def flatten_value(space: spaces.Space, value: Any) -> list[Any]:
    """The leaf values of one ``value`` of ``space``, in :func:`leaves` order."""
    if isinstance(space, spaces.Dict):
        return [x for k, s in space.spaces.items() for x in flatten_value(s, value[k])]
    if isinstance(space, spaces.Tuple):
        return [x for s, v in zip(space.spaces, value) for x in flatten_value(s, v)]
    if isinstance(space, spaces.Text) or _is_text_like(space):
        return [str(value.item() if isinstance(value, np.ndarray) else value)]
    return [np.asarray(value)]


def unflatten_batch(space: spaces.Space, arrays: dict[tuple[str, ...], Any], prefix=()) -> Any:
    """Batched leaf arrays (keyed by leaf path) back into the space's nesting.

    A Dict space gives a ``dict``, a Tuple space a ``tuple``, anything else the leaf array.
    """
    if isinstance(space, spaces.Dict):
        return {k: unflatten_batch(s, arrays, (*prefix, k)) for k, s in space.spaces.items()}
    if isinstance(space, spaces.Tuple):
        return tuple(
            unflatten_batch(s, arrays, (*prefix, str(i))) for i, s in enumerate(space.spaces)
        )
    return arrays[prefix]


def index_nested(value: Any, index: Any) -> Any:
    """``value[index]`` through dicts and tuples of arrays."""
    if isinstance(value, dict):
        return {k: index_nested(v, index) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(index_nested(v, index) for v in value)
    return value[index]


def first_outside(space: spaces.Space, values: Any) -> tuple[int, tuple[str, ...], str, Any] | None:
    """The first of a batch of ``values`` ([T, ...] per leaf, as read) outside ``space``:
    (step, leaf path, what was expected, the value), or None when all are inside. Discrete,
    MultiDiscrete and MultiBinary leaves are checked (Box actions may be clipped by the env)."""
    for leaf, sub in leaf_spaces(space):
        arr = np.asarray(index_path(values, leaf.path))
        if isinstance(sub, spaces.Discrete):
            low, high = int(sub.start), int(sub.start) + int(sub.n) - 1
            expected = f"{sub} ({low}..{high})"
        elif isinstance(sub, spaces.MultiDiscrete):
            low, high = sub.start, sub.start + sub.nvec - 1
            expected = f"{sub} (from {low.tolist()} to {high.tolist()})"
        elif isinstance(sub, spaces.MultiBinary):
            low, high, expected = 0, 1, f"{sub} (0 or 1)"
        else:
            continue
        if arr.ndim == 0 or arr.dtype.kind not in "biuf":
            continue
        bad = ~((arr >= low) & (arr <= high) & (arr == np.floor(arr)))
        if bad.ndim > 1:
            bad = bad.reshape(bad.shape[0], -1).any(axis=1)
        if bad.any():
            step = int(np.argmax(bad))
            return step, leaf.path, expected, arr[step].tolist()
    return None


def integer_span(space: spaces.Space) -> tuple[int, int] | None:
    """The smallest and largest whole number a value of the leaf ``space`` can hold
    (Discrete, MultiDiscrete, MultiBinary, integer Box), or None for other spaces."""
    if isinstance(space, spaces.Discrete):
        return int(space.start), int(space.start) + int(space.n) - 1
    if isinstance(space, spaces.MultiDiscrete):
        return int(np.min(space.start)), int(np.max(space.start + space.nvec - 1))
    if isinstance(space, spaces.MultiBinary):
        return 0, 1
    if isinstance(space, spaces.Box) and np.dtype(space.dtype).kind in "iu" and space.low.size:
        return int(np.min(space.low)), int(np.max(space.high))
    return None


def leaf_spaces(space: spaces.Space, prefix: tuple[str, ...] = ()) -> list:
    """(leaf, the space of that leaf) pairs in :func:`leaves` order."""
    if isinstance(space, spaces.Dict):
        return [x for k, s in space.spaces.items() for x in leaf_spaces(s, (*prefix, k))]
    if isinstance(space, spaces.Tuple):
        return [x for i, s in enumerate(space.spaces) for x in leaf_spaces(s, (*prefix, str(i)))]
    return [(leaf, space) for leaf in leaves(space, prefix)]


def index_path(value: Any, path: tuple[str, ...]) -> Any:
    """The leaf at ``path`` (Dict keys / Tuple indices) of a nested value."""
    for key in path:
        value = value[int(key)] if isinstance(value, tuple) else value[key]
    return value

"""The form the journal and the sink share of an item the writer queued: info flattened to
numeric arrays and text, frames and other big arrays deflated once."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _h5
from .journal import Packed


def _numeric_leaf(value: Any) -> np.ndarray | None:
    """``value`` as a numeric array when it is one (bool, int, float, numeric ndarray)."""
    if isinstance(value, (bool, int, float, np.number, np.bool_)):
        arr = np.asarray(value)
    elif isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        arr = value
    else:
        return None
    if arr.dtype.kind in "iu":
        arr = arr.astype(np.int64)
    elif arr.dtype.kind == "f":
        arr = arr.astype(np.float64)
    return arr


def flat_info(info: dict) -> dict[str, np.ndarray | str]:
    """``info`` flattened ("a/b" for nested dicts): numeric leaves as int64 / float64 / bool
    arrays, anything else as text (strings as they are, other values as JSON)."""
    out: dict[str, np.ndarray | str] = {}
    for name, value in _flatten_info(info or {}).items():
        arr = _numeric_leaf(value)
        if arr is not None:
            out[name] = arr
        else:
            out[name] = value if isinstance(value, str) else _h5.to_json(value)
    return out


def _flatten_info(info: dict, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in info.items():
        name = f"{prefix}{str(key).replace('/', '_')}"
        if isinstance(value, dict) and value:
            out.update(_flatten_info(value, name + "/"))
        else:
            out[name] = value
    return out


def record_of(item: tuple, record_frames: bool, keeping_up: bool = False) -> dict[str, Any]:
    """The journal's and the sink's form (see :class:`EpisodeSink`) of an item the writer
    queued: ``("attrs", {name: value})``, ``("reset", obs leaves, info, frame, ts)`` or
    ``("step", action leaves, obs leaves, reward, terminated, truncated, info, frame, ts,
    keys JSON, actor)``; info flattened, frames and other big arrays deflated once, harder
    while the writer ``keeping_up`` (:func:`_h5.deflate_level`)."""
    kind = item[0]
    if kind == "attrs":
        return {"kind": "attrs", "attrs": {k: _h5.to_json(v) for k, v in item[1].items()}}
    if kind == "reset":
        _, obs, info, frame, ts = item
    else:
        _, act, obs, rew, term, trunc, info, frame, ts, keys, actor = item
    if not record_frames:
        frame = None
    is_frame = _is_frame(obs, frame)
    record = {
        "kind": kind,
        "obs": None if is_frame else [_pack_big(v, keeping_up) for v in obs],
        "is_frame": is_frame,
        "info": flat_info(info or {}),
        "frame": None if frame is None else _pack_big(frame, keeping_up, always=True),
        "ts": ts,
    }
    if kind == "step":
        record.update(
            act=[_pack_big(v, keeping_up) for v in act],
            rew=rew,
            term=term,
            trunc=trunc,
            keys=keys,
            actor=actor,
        )
    return record


def _is_frame(obs: list[Any], frame: np.ndarray | None) -> bool:
    """Whether a single-leaf observation is exactly the rendered frame."""
    if frame is None or len(obs) != 1 or not isinstance(obs[0], np.ndarray):
        return False
    o = obs[0]
    return o.dtype == np.uint8 and o.shape == frame.shape and np.array_equal(o, frame)


def _pack_big(value: Any, keeping_up: bool, always: bool = False) -> Any:
    """A big array (a frame, a frame-sized observation; ``always``: any array) deflated
    once, for the journal and HDF5."""
    if isinstance(value, np.ndarray) and (always or _h5.is_big(value.shape, value.dtype)):
        return Packed.of(value, _h5.deflate_level(value.nbytes, keeping_up))
    return value

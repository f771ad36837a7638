"""Root attributes of an episode file, read as hostile input: the one place where every reader
decodes them. Each attribute must be a scalar JSON text of bounded size and nesting depth, and
the attributes the schema knows must have their JSON type (a ``total_return`` that is text,
``tags`` that are an integer, ``env_kwargs`` that are a list are refused here, naming the
field, so no reader further on meets a value of the wrong type)."""

from __future__ import annotations

import json
import math
import re
from datetime import datetime
from typing import Any

import h5py
import numpy as np

from .hostile import MAX_HEAP_OBJECT_BYTES, short_error
from .schema import FPS_RANGE, MAX_FRAMESKIP, MAX_SEED, EpisodeError, fps_in_range

MAX_ATTR_BYTES = MAX_HEAP_OBJECT_BYTES
"""Largest JSON text accepted for one attribute (env specs and space bounds are far smaller).
A fixed-length text's stored size is checked before it is read; a variable-length one's
cannot be known without reading it, so every such value in the file was bounded by this size
before the file was opened (:func:`~demostudio.episode.hostile.global_heap_problem`)."""
MAX_JSON_DEPTH = 64
"""Deepest nesting of lists / objects accepted in one attribute."""

_NUMBER_WORDS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}  # how _h5.to_json spells them


class _Kind:
    """One JSON type an attribute may have, with the words used in errors."""

    def __init__(self, name: str, check):
        self.name = name
        self.check = check


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return _is_int(v) or isinstance(v, float) or (isinstance(v, str) and v in _NUMBER_WORDS)


INT = _Kind("an integer", _is_int)
COUNT = _Kind("an integer >= 0", lambda v: _is_int(v) and v >= 0)
SEED = _Kind("an integer from 0 to 2**64-1", lambda v: _is_int(v) and 0 <= v <= MAX_SEED)
NUMBER = _Kind("a number", _is_number)
BOOL = _Kind("true or false", lambda v: isinstance(v, bool))
TEXT = _Kind("text", lambda v: isinstance(v, str))
OBJECT = _Kind("an object", lambda v: isinstance(v, dict))
GYM_ID = _Kind(
    "a Gymnasium id (letters, digits, / - _ . only: no module:Env form, a file never names code"
    " to import)",
    lambda v: isinstance(v, str) and re.fullmatch(r"[A-Za-z0-9_./-]{1,200}", v) is not None,
)
SPEC = _Kind("an object (the JSON of EnvSpec.to_json())", lambda v: isinstance(v, dict))
TEXT_LIST = _Kind(
    "a list of text", lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v)
)


def _is_date(v: Any) -> bool:
    if isinstance(v, str) and v.endswith("Z"):  # Python 3.10 reads only "+00:00"
        v = v[:-1] + "+00:00"
    try:
        datetime.fromisoformat(v)
    except (TypeError, ValueError):
        return False
    return True


def _is_skip(v: Any) -> bool:
    return _is_int(v) and 1 <= v <= MAX_FRAMESKIP


SCHEMA = _Kind("an integer >= 1", lambda v: _is_int(v) and v >= 1)
FPS = _Kind(f"a number of steps per second {FPS_RANGE}", fps_in_range)
FRAMESKIP = _Kind(
    f"an integer from 1 to {MAX_FRAMESKIP} or a list [low, high] of them",
    lambda v: _is_skip(v) or (isinstance(v, list) and len(v) == 2 and all(map(_is_skip, v))),
)
PROBABILITY = _Kind(
    "a number from 0 to 1",
    lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1,
)
DATE = _Kind("an ISO 8601 time (2024-05-01T12:00:00+02:00)", _is_date)

# (kind, null allowed) of every root attribute the schema knows (see schema.py's table).
ATTR_TYPES: dict[str, tuple[_Kind, bool]] = {
    "format": (TEXT, False),
    "schema_version": (SCHEMA, False),
    "env_id": (GYM_ID, False),
    "env_kwargs": (OBJECT, False),
    "env_spec": (SPEC, True),
    "seed": (SEED, True),
    "reset_options": (OBJECT, True),
    "observation_space": (OBJECT, False),
    "action_space": (OBJECT, False),
    "action_meanings": (TEXT_LIST, True),
    "actor_names": (TEXT_LIST, False),
    "controller": (TEXT, False),
    "player": (TEXT, True),
    "key_map": (OBJECT, True),
    "fps": (FPS, True),
    "frameskip": (FRAMESKIP, True),
    "sticky_actions": (PROBABILITY, True),
    "max_episode_steps": (COUNT, True),
    "versions": (OBJECT, True),
    "recorded_at": (DATE, False),
    "length": (COUNT, False),
    "flushed_steps": (COUNT, False),
    "total_return": (NUMBER, False),
    "terminated": (BOOL, False),
    "truncated": (BOOL, False),
    "recovered": (BOOL, False),
    "tags": (TEXT_LIST, False),
    "notes": (TEXT, False),
}

CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
"""C0 and C1 control characters, bidi marks, embeddings, overrides and isolates, and the line
and paragraph separators: text that moves a terminal's cursor, clears it, fakes a line or
reverses what follows it."""


def printable(text: str) -> str:
    """``text`` with every :data:`CONTROL` character escaped as Python's repr writes it
    (``\\x1b``, ``\\n``, ``\\u202e``), for showing text from a file on a terminal."""
    return CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_BRACKET = re.compile(r"[\[\]{}]")


def json_depth(text: str) -> int:
    """The deepest nesting of ``[`` / ``{`` in JSON ``text`` (strings skipped), without parsing."""
    marks = _BRACKET.findall(_STRING.sub("", text))
    if not marks:
        return 0
    steps = np.fromiter((1 if m in "[{" else -1 for m in marks), np.int64, len(marks))
    return int(np.cumsum(steps).max())


def check_type(path: object, key: str, value: Any) -> Any:
    """``value`` if it has attribute ``key``'s JSON type, else EpisodeError naming ``key``."""
    rule = ATTR_TYPES.get(key)
    if rule is None:
        return value
    kind, nullable = rule
    if value is None and nullable:
        return value
    if not kind.check(value):
        raise EpisodeError(
            path, key, f"expected {kind.name}{' or null' if nullable else ''}, got {_show(value)}"
        )
    if kind is NUMBER and isinstance(value, str):
        return _NUMBER_WORDS[value]
    return value


def _show(value: Any) -> str:
    kind = {
        type(None): "null",
        bool: "true/false",
        int: "an integer",
        float: "a number",
        str: "text",
        list: "a list",
        dict: "an object",
    }.get(type(value), type(value).__name__)
    text = json.dumps(value)
    return f"{kind} {text[:60]}{'...' if len(text) > 60 else ''}"


def read_attr(obj: h5py.HLObject, key: str, path: object) -> Any:
    """The checked JSON value of attribute ``key`` of ``obj`` (KeyError when absent).

    The attribute's storage is looked at before its value is read: it must be one scalar text
    of at most :data:`MAX_ATTR_BYTES`, holding JSON nested at most :data:`MAX_JSON_DEPTH` deep,
    of the JSON type the schema gives ``key``. Every other problem is an EpisodeError naming
    ``key``."""
    return check_type(path, key, read_json(obj, key, path))


def read_json(obj: h5py.HLObject, key: str, path: object) -> Any:
    """The JSON value of attribute ``key`` as :func:`read_attr` reads it, its type unchecked
    (``flushed_steps`` of a ``.partial`` is -1 until the reset)."""
    try:
        aid = h5py.h5a.open(obj.id, key.encode("utf-8"))
    except KeyError:
        raise
    except (OSError, RuntimeError, ValueError) as exc:
        raise EpisodeError(path, key, f"cannot read this attribute ({short_error(exc)})") from None
    try:
        shape, dtype = aid.shape, aid.dtype
    except (OSError, RuntimeError, ValueError, TypeError) as exc:
        raise EpisodeError(path, key, f"cannot read this attribute ({short_error(exc)})") from None
    text = h5py.check_string_dtype(dtype)
    if shape not in ((), None) or text is None:
        raise EpisodeError(
            path, key, f"expected one JSON text, got {dtype} values of shape {shape}"
        )
    if text.length is not None and text.length > MAX_ATTR_BYTES:  # fixed-length: not read yet
        raise EpisodeError(path, key, f"expected at most {MAX_ATTR_BYTES} bytes of JSON")
    try:
        raw = obj.attrs[key]
    except (OSError, RuntimeError, ValueError, TypeError) as exc:
        raise EpisodeError(path, key, f"cannot read this attribute ({short_error(exc)})") from None
    if isinstance(raw, bytes):
        if len(raw) > MAX_ATTR_BYTES:
            raise EpisodeError(path, key, f"expected at most {MAX_ATTR_BYTES} bytes of JSON")
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise EpisodeError(path, key, "expected UTF-8 JSON text, got other bytes") from None
    if not isinstance(raw, str):
        raise EpisodeError(path, key, f"expected JSON text, got {type(raw).__name__}")
    if len(raw) > MAX_ATTR_BYTES:
        raise EpisodeError(path, key, f"expected at most {MAX_ATTR_BYTES} bytes of JSON")
    depth = json_depth(raw)
    if depth > MAX_JSON_DEPTH:
        raise EpisodeError(
            path, key, f"expected JSON nested at most {MAX_JSON_DEPTH} deep, got {depth}"
        )
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise EpisodeError(path, key, f"expected a JSON attribute ({short_error(exc)})") from None
    return value


def read_attrs(obj: h5py.HLObject, path: object) -> dict[str, Any]:
    """Every attribute of ``obj``, checked by :func:`read_attr`. Attributes kept in dense
    storage (a file may put them there) are loaded whole when they are listed, so their
    stored size is checked first."""
    try:
        dense = h5py.h5o.get_info(obj.id).meta_size.attr.heap_size
        if dense > MAX_ATTR_BYTES:
            raise EpisodeError(
                path, None, f"expected at most {MAX_ATTR_BYTES} bytes of attributes, got {dense}"
            )
        names = list(obj.attrs)
    except (OSError, RuntimeError, ValueError, TypeError) as exc:
        raise EpisodeError(path, None, f"cannot list the attributes ({short_error(exc)})") from None
    for key in names:
        if not isinstance(key, str):
            raise EpisodeError(path, repr(key), "expected an attribute name in UTF-8")
    return {key: read_attr(obj, key, path) for key in names}

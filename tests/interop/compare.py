"""Exact comparison of nested values (dicts, tuples, arrays, text) for the interop tests."""

from __future__ import annotations

from typing import Any

import numpy as np


def _text(v: Any) -> str:
    return v.decode("utf-8") if isinstance(v, bytes) else str(v)


def assert_same(a: Any, b: Any, where: str = "value") -> None:
    """``a`` and ``b`` hold the same values (dtypes may differ, floats compared exactly)."""
    if isinstance(a, dict) or isinstance(b, dict):
        assert isinstance(a, dict) and isinstance(b, dict), f"{where}: {type(a)} vs {type(b)}"
        assert sorted(a) == sorted(b), f"{where}: keys {sorted(a)} vs {sorted(b)}"
        for k in a:
            assert_same(a[k], b[k], f"{where}[{k!r}]")
        return
    if isinstance(a, tuple) or isinstance(b, tuple):
        assert len(a) == len(b), f"{where}: lengths {len(a)} vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{i}]")
        return
    x, y = np.asarray(a), np.asarray(b)
    if x.dtype.kind in "OSU" or y.dtype.kind in "OSU":
        xs = [_text(v) for v in x.reshape(-1)]
        ys = [_text(v) for v in y.reshape(-1)]
        assert xs == ys, f"{where}: {xs[:3]} vs {ys[:3]}"
        return
    assert x.shape == y.shape, f"{where}: shapes {x.shape} vs {y.shape}"
    assert np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), f"{where}: values differ"


def flat_infos(nested: dict, prefix: str = "") -> dict[str, Any]:
    """Minari's nested infos as our flat ``a/b`` names."""
    out: dict[str, Any] = {}
    for k, v in nested.items():
        if isinstance(v, dict):
            out.update(flat_infos(v, f"{prefix}{k}/"))
        else:
            out[f"{prefix}{k}"] = v
    return out

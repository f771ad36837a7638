"""Observation preprocessing: ONE function for live observations and for demo observations.

:func:`make_preprocessor` looks at the env's observation space once and returns a
:class:`Preprocessor` that turns a *batch* of raw observations (from a vector env, or the
T+1 observations of a recorded episode) into a dict of numpy arrays, one per leaf:

* RGB or gray images at least 32 pixels tall (Atari frames): ``frame``, gray, 84x84 uint8.
* stacks of gray frames ``[k, H, W]`` uint8 (k <= 16, H and W >= 32, made by a frame-stack
  wrapper, e.g. RND-PPO's Atari settings): ``frame`` of that shape, kept as is.
* small uint8 ``H x W x C`` grids (MiniGrid's symbolic 7x7x3 view): ``grid``, kept as is.
* ``Discrete``: ``discrete``, int64 index (one-hot in the network).
* any other ``Box`` / ``MultiBinary``: ``vector``, float32, flattened. Its finite bounds
  are kept in the leaf (``center``, ``half``): the network maps those dimensions to [-1, 1]
  (MountainCar's velocity spans 0.14 beside a position range of 1.8), the arrays stay raw.
* ``Dict``: each key as above; text leaves (MiniGrid's mission) are dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from gymnasium import spaces

LeafKind = Literal["frame", "grid", "discrete", "vector"]
FRAME_SIZE = 84
"""Atari frames are resized to FRAME_SIZE x FRAME_SIZE gray."""


@dataclass(frozen=True)
class Leaf:
    """One preprocessed observation leaf: its kind and per-step shape."""

    kind: LeafKind
    shape: tuple[int, ...]
    """Shape of one step after preprocessing (no batch dim)."""
    n: int = 0
    """Number of values for ``discrete`` leaves."""
    center: tuple[float, ...] = field(default=(), compare=False)
    """``vector`` leaves: the middle of each dimension's bounds (0 where unbounded); empty:
    no scaling. Not compared: demos and env match on kind and shape."""
    half: tuple[float, ...] = field(default=(), compare=False)
    """``vector`` leaves: half of each dimension's range (1 where unbounded)."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "shape": list(self.shape), "n": self.n}
        if self.center:
            out["center"], out["half"] = list(self.center), list(self.half)
        return out

    @staticmethod
    def from_json(d: Mapping[str, Any]) -> Leaf:
        """Raises KeyError/TypeError/ValueError on a malformed leaf (callers name the file);
        a leaf without ``center`` and ``half`` has no bounds (no scaling)."""
        shape = tuple(int(s) for s in d["shape"])
        center = tuple(float(x) for x in d.get("center", ()))
        half = tuple(float(x) for x in d.get("half", ()))
        if center or half:
            size = int(np.prod(shape))
            if len(center) != size or len(half) != size:
                raise ValueError(f"center/half: expected {size} values each, got {len(center)}")
            if not all(np.isfinite(center)) or not all(np.isfinite(h) and h > 0 for h in half):
                raise ValueError("center/half: expected finite values and half > 0")
        return Leaf(d["kind"], shape, int(d["n"]), center, half)


def vector_bounds(space: spaces.Box) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """``(center, half)`` of a Box's finite dimensions (0 and 1 elsewhere); empty when no
    dimension is bounded on both sides."""
    low = np.asarray(space.low, np.float64).reshape(-1)
    high = np.asarray(space.high, np.float64).reshape(-1)
    bounded = np.isfinite(low) & np.isfinite(high) & (high - low > 1e-8)
    if not bounded.any():
        return (), ()
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf where unbounded
        center = np.where(bounded, (low + high) / 2, 0.0)
        half = np.where(bounded, (high - low) / 2, 1.0)
    return tuple(float(x) for x in center), tuple(float(x) for x in half)


ObsSpec = dict[str, Leaf]
"""Leaf name -> Leaf; the names are the Dict keys, or ``obs`` for a single leaf."""


def spatial_leaves(spec: ObsSpec) -> list[str]:
    """The names of the image and grid leaves of ``spec`` (``frame``, ``grid``)."""
    return [name for name, leaf in spec.items() if leaf.kind in ("frame", "grid")]


def is_frame_stack(shape: tuple[int, ...]) -> bool:
    """``[k, H, W]`` with a few channels first and H, W >= 32: stacked gray frames."""
    return len(shape) == 3 and 1 <= shape[0] <= 16 and min(shape[1:]) >= 32


def _leaf_for(space: spaces.Space) -> Leaf | None:
    if isinstance(space, spaces.Discrete):
        return Leaf("discrete", (), int(space.n))
    if isinstance(space, spaces.Box) and space.dtype == np.uint8 and is_frame_stack(space.shape):
        return Leaf("frame", tuple(int(s) for s in space.shape))
    if isinstance(space, spaces.Box) and space.dtype == np.uint8 and len(space.shape) in (2, 3):
        is_image = space.shape[0] >= 32 and (len(space.shape) == 2 or space.shape[2] in (1, 3))
        if is_image:
            return Leaf("frame", (FRAME_SIZE, FRAME_SIZE))
        if len(space.shape) == 3:
            return Leaf("grid", tuple(space.shape))
    if isinstance(space, spaces.Box):
        return Leaf("vector", (int(np.prod(space.shape)),), 0, *vector_bounds(space))
    if isinstance(space, spaces.MultiBinary):
        return Leaf("vector", (int(np.prod(space.shape)),))
    if isinstance(space, spaces.Text) or type(space).__name__ == "MissionSpace":
        return None  # text (MiniGrid's mission; recorded files store it as Text)
    raise TypeError(
        f"expected an observation space made of Box, Discrete, MultiBinary, Text or Dict, "
        f"got {space}"
    )


def obs_spec(space: spaces.Space) -> ObsSpec:
    """The preprocessed leaves of ``space`` (what the network is built from)."""
    if isinstance(space, spaces.Dict):
        spec = {k: _leaf_for(s) for k, s in space.spaces.items()}
        out = {k: v for k, v in spec.items() if v is not None}
    else:
        leaf = _leaf_for(space)
        out = {} if leaf is None else {"obs": leaf}
    if not out:
        raise TypeError(f"expected an observation space with at least one usable leaf, got {space}")
    return out


def gray_84(images: np.ndarray) -> np.ndarray:
    """``[N, H, W, 3]`` or ``[N, H, W]`` uint8 -> ``[N, 84, 84]`` uint8 gray (area resize)."""
    from PIL import Image

    if images.ndim == 4:
        if images.shape[-1] == 3:
            images = images.astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)
        else:
            images = images[..., 0].astype(np.float32)
    out = np.empty((len(images), FRAME_SIZE, FRAME_SIZE), np.uint8)
    for i, img in enumerate(images):
        pil = Image.fromarray(np.clip(img, 0, 255).astype(np.uint8), mode="L")
        out[i] = np.asarray(pil.resize((FRAME_SIZE, FRAME_SIZE), Image.Resampling.BOX))
    return out


def _apply(leaf: Leaf, values: Any) -> np.ndarray:
    arr = np.asarray(values)
    n = arr.shape[0]
    if leaf.kind == "frame":
        return arr.astype(np.uint8, copy=False) if len(leaf.shape) == 3 else gray_84(arr)
    if leaf.kind == "grid":
        return arr.astype(np.uint8, copy=False)
    if leaf.kind == "discrete":
        return arr.astype(np.int64, copy=False).reshape(n)
    return arr.astype(np.float32, copy=False).reshape(n, -1)


@dataclass(frozen=True)
class Preprocessor:
    """Batch of raw observations -> dict of preprocessed arrays ``{leaf: [N, ...]}``."""

    spec: ObsSpec
    is_dict: bool

    def __call__(self, batch: Any) -> dict[str, np.ndarray]:
        if self.is_dict:
            return {k: _apply(leaf, batch[k]) for k, leaf in self.spec.items()}
        return {"obs": _apply(self.spec["obs"], batch)}

    def one(self, observation: Any) -> dict[str, np.ndarray]:
        """A single (unbatched) observation -> dict of arrays without batch dim."""
        if self.is_dict:
            batch = {k: np.asarray(observation[k])[None] for k in self.spec}
        else:
            batch = np.asarray(observation)[None]
        return {k: v[0] for k, v in self(batch).items()}


def make_preprocessor(space: spaces.Space) -> Preprocessor:
    return Preprocessor(obs_spec(space), isinstance(space, spaces.Dict))


def spec_to_json(spec: ObsSpec) -> dict[str, Any]:
    return {k: leaf.to_json() for k, leaf in spec.items()}


def spec_from_json(d: Mapping[str, Any]) -> ObsSpec:
    return {k: Leaf.from_json(v) for k, v in d.items()}


__all__ = [
    "FRAME_SIZE",
    "Leaf",
    "ObsSpec",
    "Preprocessor",
    "gray_84",
    "is_frame_stack",
    "make_preprocessor",
    "obs_spec",
    "spec_from_json",
    "spec_to_json",
]

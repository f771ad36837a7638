"""Verifying an episode by re-simulation: same env, same seed, same actions, same results."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .envs import env_kwargs_error, episode_env
from .hostile import short_error
from .reader import EpisodeFile, EpisodeSummary
from .schema import EpisodeError
from .spaces import index_nested
from .trim import replay_prefix


@dataclass(frozen=True)
class Divergence:
    step: int
    """The step index t (-1: the reset) at which the re-simulation first differs."""
    field: str
    detail: str


@dataclass(frozen=True)
class VerifyResult:
    path: Path
    steps_checked: int
    divergence: Divergence | None

    @property
    def ok(self) -> bool:
        return self.divergence is None

    def describe(self) -> str:
        if self.divergence is None:
            return f"{self.path}: matches ({self.steps_checked} steps re-simulated)"
        d = self.divergence
        where = "at reset" if d.step < 0 else f"at step {d.step}"
        return f"{self.path}: diverges {where} in {d.field}: {d.detail}"


def observation_leaves(value: Any) -> list[Any]:
    """The leaves of a nested observation (dict keys sorted, tuples and lists in order)."""
    if isinstance(value, dict):
        return [x for k in sorted(value) for x in observation_leaves(value[k])]
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in observation_leaves(v)]
    return [value]


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def describe_difference(stored: Any, live: Any, image_tolerance: float | None = None) -> str | None:
    """Why a stored observation differs from a re-simulated one, or None if they match
    (floats within rtol 1e-5 / atol 1e-6, everything else exactly). With ``image_tolerance``,
    uint8 images (2+ dims) match when their mean absolute difference is at most that (for
    observations that went through a lossy codec elsewhere)."""
    a_leaves, b_leaves = observation_leaves(stored), observation_leaves(live)
    if len(a_leaves) != len(b_leaves):
        return f"stored {len(a_leaves)} leaves, re-simulated {len(b_leaves)}"
    for i, (a, b) in enumerate(zip(a_leaves, b_leaves)):
        if isinstance(a, (str, bytes, np.str_)) or isinstance(b, (str, bytes, np.str_)):
            if _text(a) != _text(b):
                return f"leaf {i}: stored {_text(a)!r}, re-simulated {_text(b)!r}"
            continue
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return f"leaf {i}: stored shape {a.shape}, re-simulated shape {b.shape}"
        if image_tolerance is not None and a.dtype == np.uint8 and a.ndim >= 2:
            err = float(np.mean(np.abs(a.astype(np.int16) - b.astype(np.int16))))
            if err > image_tolerance:
                return f"leaf {i}: mean abs difference {err:.3g} > {image_tolerance:g}"
            continue
        if a.dtype.kind == "f" or b.dtype.kind == "f":
            if not np.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True):
                a64, b64 = a.astype(np.float64), b.astype(np.float64)
                one_sided = np.isnan(a64) != np.isnan(b64)
                if one_sided.any():  # (nanmax would warn on an all-NaN difference)
                    return f"leaf {i}: {int(one_sided.sum())} values NaN on one side only"
                both = np.isnan(a64)
                err = float(np.max(np.abs(a64 - b64)[~both]))
                return f"leaf {i}: max abs difference {err:.3g}"
        elif not np.array_equal(a, b):
            return f"leaf {i}: {int(np.sum(a != b))} of {a.size} values differ"
    return None


def _reset_failed(path: Path, s: EpisodeSummary, exc: Exception) -> EpisodeError:
    """The env raised in ``reset``: the file's ``reset_options`` are what reset alone is
    given, so they are named when there are any; otherwise the ``env_kwargs`` it was made
    with."""
    options = s.attrs.get("reset_options")
    if not options:
        return env_kwargs_error(path, s.env_kwargs, "resets", exc)
    return EpisodeError(
        path,
        "reset_options",
        f"expected options the env resets with, got {json.dumps(options)[:200]}: it fails "
        f"when it resets ({type(exc).__name__}: {short_error(exc)})",
    )


def verify_episode(
    path: str | os.PathLike,
    frames: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> VerifyResult:
    """Re-create the env from the stored id (the installed registry's env, after the file's
    spec is compared with it), kwargs and seed, replay the stored actions and
    compare observations, rewards, terminations, truncations and (optionally) frames."""
    path = Path(path)
    with EpisodeFile(path) as ep:
        s = ep.summary
        data = ep.load(frames=False)
        compare_frames = frames and ep.has_frames
        if s.seed is None:
            raise EpisodeError(path, "seed", "expected the reset seed, the file has none")
        env = episode_env(path, s.attrs, render_mode="rgb_array" if compare_frames else None)
        try:
            try:
                obs, _ = env.reset(seed=int(s.seed), options=s.attrs.get("reset_options"))
            except Exception as exc:
                raise _reset_failed(path, s, exc) from None
            obs, ended = replay_prefix(env, ep, obs)  # a trimmed file: the steps before it
            if ended:
                return VerifyResult(path, 0, Divergence(-1, "trim", ended))

            def check(t: int, live_obs: Any) -> Divergence | None:
                msg = describe_difference(index_nested(data.observations, t + 1), live_obs)
                if msg:
                    return Divergence(t, "observations", msg)
                if compare_frames:
                    live = env.render()
                    stored = ep.frame(t + 1)
                    if (
                        live is None
                        or live.shape != stored.shape
                        or not np.array_equal(live, stored)
                    ):
                        n = (
                            "?"
                            if live is None or live.shape != stored.shape
                            else int(np.sum(np.any(live != stored, axis=-1)))
                        )
                        return Divergence(t, "frames", f"{n} pixels differ")
                return None

            bad = check(-1, obs)
            if bad:
                return VerifyResult(path, 0, bad)
            for t in range(s.length):
                action = index_nested(data.actions, t)
                if isinstance(action, np.ndarray) and action.shape == ():
                    action = action.item()
                try:
                    obs, reward, term, trunc, _ = env.step(action)
                except Exception as exc:
                    raise env_kwargs_error(path, s.env_kwargs, f"steps (step {t})", exc) from None
                if not np.isclose(reward, data.rewards[t], rtol=1e-6, atol=1e-8):
                    return VerifyResult(
                        path,
                        t,
                        Divergence(
                            t, "rewards", f"stored {data.rewards[t]:g}, re-simulated {reward:g}"
                        ),
                    )
                if bool(term) != bool(data.terminations[t]):
                    return VerifyResult(
                        path,
                        t,
                        Divergence(
                            t,
                            "terminations",
                            f"stored {bool(data.terminations[t])}, re-simulated {bool(term)}",
                        ),
                    )
                if bool(trunc) != bool(data.truncations[t]):
                    return VerifyResult(
                        path,
                        t,
                        Divergence(
                            t,
                            "truncations",
                            f"stored {bool(data.truncations[t])}, re-simulated {bool(trunc)}",
                        ),
                    )
                bad = check(t, obs)
                if bad:
                    return VerifyResult(path, t, bad)
                if progress is not None:
                    progress(t + 1, s.length)
            return VerifyResult(path, s.length, None)
        finally:
            env.close()

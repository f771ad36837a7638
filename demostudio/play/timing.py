"""Game timing: the real-time step rate of an env, turn-based defaults, a fixed-rate clock and a
measured-rate meter."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

import gymnasium as gym

ATARI_HZ = 60.0
"""The Atari 2600's frame rate; an ALE step lasts ``frameskip`` frames."""
TURN_BASED_PREFIXES = ("MiniGrid-", "BabyAI-")
DEFAULT_FPS = 30.0


def _frameskip(env: gym.Env) -> float | None:
    kwargs = env.spec.kwargs if env.spec is not None else {}
    skip = kwargs.get("frameskip", getattr(env.unwrapped, "_frameskip", None))
    if isinstance(skip, (tuple, list)) and len(skip) == 2:
        # ALE samples frameskip uniformly from [low, high).
        return (float(skip[0]) + float(skip[1]) - 1.0) / 2.0
    if isinstance(skip, (int, float)) and skip > 0:
        return float(skip)
    return None


def is_atari(env: gym.Env) -> bool:
    return hasattr(env.unwrapped, "ale")


def realtime_fps(env: gym.Env) -> float:
    """Steps per second at which ``env`` plays in real time.

    ALE: 60 Hz divided by the frameskip (15 steps/s for v5's frameskip 4, 60 for frameskip 1).
    Others: the env's ``metadata["render_fps"]`` (MountainCar 30, CartPole 50, Acrobot 15)."""
    if is_atari(env):
        skip = _frameskip(env) or 1.0
        return ATARI_HZ / skip
    fps = env.metadata.get("render_fps")
    if isinstance(fps, (int, float)) and fps > 0:
        return float(fps)
    return DEFAULT_FPS


def turn_based_default(env_id: str) -> bool:
    """Grid worlds (MiniGrid, BabyAI) step only on a key press by default."""
    return env_id.startswith(TURN_BASED_PREFIXES)


class RateClock:
    """Ticks at a fixed rate: :meth:`wait` sleeps until the next tick is due.

    Deadlines advance by exactly one period, so short hiccups are caught up; after falling more
    than a period behind the schedule restarts from now (no burst of fast steps)."""

    def __init__(
        self,
        fps: float | None,
        now: Callable[[], float] = time.perf_counter,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if fps is not None and fps <= 0:
            raise ValueError(f"expected fps > 0 or None, got {fps}")
        self.period = 0.0 if fps is None else 1.0 / fps
        self._now = now
        self._sleep = sleep
        self._next = now() + self.period

    def set_fps(self, fps: float | None) -> None:
        self.period = 0.0 if fps is None else 1.0 / fps
        self._next = self._now() + self.period

    def wait(self) -> None:
        if self.period <= 0:
            return
        now = self._now()
        delay = self._next - now
        if delay > 0:
            self._sleep(delay)
            self._next += self.period
        elif -delay > self.period:
            self._next = now + self.period
        else:
            self._next += self.period


class RateMeter:
    """Events per second over a sliding window of the last ``window`` seconds."""

    def __init__(self, window: float = 1.0, now: Callable[[], float] = time.perf_counter):
        self.window = window
        self._now = now
        self._times: deque[float] = deque()

    def tick(self) -> None:
        t = self._now()
        self._times.append(t)
        while self._times and t - self._times[0] > self.window:
            self._times.popleft()

    def reset(self) -> None:
        self._times.clear()

    @property
    def rate(self) -> float:
        if len(self._times) < 2:
            return 0.0
        span = self._times[-1] - self._times[0]
        return (len(self._times) - 1) / span if span > 0 else 0.0


__all__ = [
    "ATARI_HZ",
    "RateClock",
    "RateMeter",
    "is_atari",
    "realtime_fps",
    "turn_based_default",
]

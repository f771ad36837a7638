"""Changing the game's speed during play, and the per-step rate record kept in the episode file.

``[`` and ``]`` move along :data:`SPEEDS`, multiples of the session's starting rate. An episode
file's ``fps`` attribute is the rate of its first step; the root attribute ``speed_changes``
(JSON list of ``[step, fps]``, present only when the rate changed) says from which step on
which rate applied, ``null`` for a step taken by hand (frame advance while paused). So
``fps`` never claims a rate that did not hold, and :func:`step_rates` gives every step's.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

SPEEDS: tuple[float, ...] = (0.125, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0)
"""Speed multiples of the starting rate that ``[`` / ``]`` step through."""
NORMAL = SPEEDS.index(1.0)


class Speed:
    """The current multiple of a base rate (``None`` base: as fast as possible, fixed)."""

    def __init__(self, base_fps: float | None):
        self.base_fps = base_fps
        self.index = NORMAL

    @property
    def factor(self) -> float:
        return SPEEDS[self.index]

    @property
    def fps(self) -> float | None:
        """Target steps per second now (None: as fast as possible)."""
        return None if self.base_fps is None else self.base_fps * self.factor

    def change(self, steps: int) -> bool:
        """Move ``steps`` along :data:`SPEEDS` (clamped); False when nothing changed."""
        if self.base_fps is None:
            return False
        index = min(len(SPEEDS) - 1, max(0, self.index + steps))
        changed, self.index = index != self.index, index
        return changed


class RateLog:
    """The ``speed_changes`` of one episode: ``[step, fps]`` whenever a step's rate differs
    from the previous step's (the first step's rate is the file's ``fps``)."""

    def __init__(self, first_fps: float | None):
        self.first_fps = first_fps
        self.changes: list[list[float | int | None]] = []

    @property
    def current(self) -> float | None:
        return self.changes[-1][1] if self.changes else self.first_fps

    def note(self, step: int, fps: float | None) -> bool:
        """Step ``step`` runs at ``fps`` (None: by hand); True when that is a change."""
        if fps == self.current:
            return False
        self.changes.append([int(step), None if fps is None else float(fps)])
        return True


def step_rates(
    fps: float | None, speed_changes: Sequence[Sequence] | None, length: int
) -> np.ndarray:
    """The target rate of each of ``length`` steps (NaN: as fast as possible or by hand),
    from an episode's ``fps`` and ``speed_changes`` attributes.

    Raises ValueError worded "expected X, got Y" for a malformed ``speed_changes``."""
    rates = np.full(length, np.nan if fps is None else float(fps))
    last = -1
    for i, entry in enumerate(speed_changes or ()):
        ok = isinstance(entry, (list, tuple)) and len(entry) == 2
        step, rate = entry if ok else (None, None)
        if (
            not ok
            or isinstance(step, bool)
            or not isinstance(step, int)
            or not last < step < length
            or isinstance(rate, bool)
            or not (rate is None or (isinstance(rate, (int, float)) and rate > 0))
        ):
            raise ValueError(
                f"speed_changes[{i}]: expected [step, fps > 0 or null] with steps increasing "
                f"and below the length {length}, got {entry!r}"
            )
        last = step
        rates[step:] = np.nan if rate is None else float(rate)
    return rates


__all__ = ["NORMAL", "SPEEDS", "RateLog", "Speed", "step_rates"]

"""What a run's metrics.jsonl rows say about its progress: the evaluation and training returns
to draw, how far it got, how it last stopped, and how fast it went.

The speed comes from the rows the run shell logs at the end of each logging window: ``sps``
(env steps per second, phases clocked in env steps) or ``ups`` (learner updates per second,
phases clocked in updates: DQfD's and RND-PPO's pre-training, BC). A window's length in
seconds is what it advanced divided by its rate, so the rows give both the training time of a
run and its measured rate on this machine, with no clock of the launcher's involved. The
first window of a phase holds the warm-up (filling the replay before learning starts), so a
phase's rate leaves it out when later windows exist."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

Clock = Literal["env_steps", "updates"]

STOP_KINDS = ("interrupted", "failed", "resume")
"""Rows that end or restart a run: the last one says how the run last stopped (a ``resume``
after an ``interrupted`` means it is going again)."""


@dataclass
class PhaseSpeed:
    """The logging windows of one phase kind (``train``, ``pretrain``)."""

    clock: Clock
    amount: float = 0.0
    """Env steps (or updates) done in the windows after the first."""
    seconds: float = 0.0
    """Their length in seconds."""
    first: tuple[float, float] | None = None
    """(amount, seconds) of the first window: the warm-up."""

    def add(self, amount: float, seconds: float) -> None:
        if self.first is None:
            self.first = (amount, seconds)
        else:
            self.amount += amount
            self.seconds += seconds

    @property
    def total_seconds(self) -> float:
        return self.seconds + (self.first[1] if self.first else 0.0)

    @property
    def settled(self) -> bool:
        """A window after the warm-up has ended (the rate is the learning one)."""
        return self.seconds > 0

    @property
    def rate(self) -> float | None:
        """Clock units per second, measured; None before any window ended."""
        if self.seconds > 0:
            return self.amount / self.seconds
        if self.first is not None and self.first[1] > 0:
            return self.first[0] / self.first[1]
        return None


@dataclass
class Progress:
    """The fold of a run's metrics rows (:meth:`add` each, in order)."""

    clock: Clock = "env_steps"
    """The x axis of the curves: env steps, or learner updates for a run clocked in updates
    (BC never steps an env to learn)."""
    evals: list[tuple[int, float]] = field(default_factory=list)
    """(x, mean evaluation return) of each ``eval`` row."""
    train: list[tuple[int, float]] = field(default_factory=list)
    """(x, mean training episode return) of each ``train`` row that has one."""
    env_steps: int = 0
    updates: int = 0
    stop: dict[str, Any] | None = None
    """The last ``interrupted`` or ``failed`` row, unless a ``resume`` row followed it."""
    speeds: dict[str, PhaseSpeed] = field(default_factory=dict)
    rows: int = 0
    _prev_steps: int = 0
    _prev_updates: int = 0

    def add(self, row: dict[str, Any]) -> None:
        self.rows += 1
        kind, steps = row["kind"], row["env_steps"]
        self.env_steps = max(self.env_steps, steps)
        updates = _whole(row.get("updates"))
        if updates is not None:
            self.updates = max(self.updates, updates)
        if kind in STOP_KINDS:
            self.stop = None if kind == "resume" else row
            if kind == "resume":  # the shell's windows restart at the resumed counters
                self._prev_steps = steps
        x = steps if self.clock == "env_steps" else (updates or 0)
        if kind == "eval" and _number(row.get("eval_return")):
            self.evals.append((x, float(row["eval_return"])))
        if kind == "train" and _number(row.get("episode_return")):
            self.train.append((x, float(row["episode_return"])))
        self._window(kind, row, steps, updates)

    def _window(self, kind: str, row: dict[str, Any], steps: int, updates: int | None) -> None:
        """A row that closes a logging window: its length from its rate."""
        sps, ups = row.get("sps"), row.get("ups")
        if _number(sps) and sps > 0:
            amount, rate, clock = steps - self._prev_steps, sps, "env_steps"
            self._prev_steps = steps
        elif _number(ups) and ups > 0 and updates is not None:
            amount, rate, clock = updates - self._prev_updates, ups, "updates"
        else:
            return
        if updates is not None:
            self._prev_updates = updates
        if amount <= 0:
            return
        speed = self.speeds.setdefault(kind, PhaseSpeed(clock))
        speed.add(amount, amount / rate)

    @property
    def wall_seconds(self) -> float:
        """Training time: the length of every logging window so far (the start-up before the
        first step and the final evaluation are not in a window)."""
        return sum(s.total_seconds for s in self.speeds.values())

    @property
    def best_eval(self) -> float | None:
        return max((r for _, r in self.evals), default=None)

    @property
    def last_eval(self) -> float | None:
        return self.evals[-1][1] if self.evals else None

    def rate(self, kind: str = "train", settled: bool = False) -> float | None:
        """The measured rate of the phase ``kind`` (``settled``: only once a window after the
        warm-up has ended)."""
        speed = self.speeds.get(kind)
        if speed is None or (settled and not speed.settled):
            return None
        return speed.rate


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _whole(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return int(value)
    return None


__all__ = ["STOP_KINDS", "Clock", "PhaseSpeed", "Progress"]

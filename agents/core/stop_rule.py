"""When a run has learned: the rule that ends it before its budget, which is then a cap.

A user who asks for an agent wants one that plays as well as their demos (or, without demos,
as well as the env's own idea of solved), not 100,000 env steps of a run that got there at
5,000. The rule is the mean return of the last ``evals`` evaluations reaching ``target``;
the target comes, in this order, from ``--stop-return`` (a value the user gives), else from
``--stop-when``:

* ``auto`` (the default): the demos' mean return where the run learns from demos, else the
  env spec's ``reward_threshold`` where it has one (CartPole-v1: 475), else none (the
  whole budget runs);
* ``demos``: the demos' mean return (a run without demos is refused);
* ``threshold``: the env spec's reward threshold (an env without one is refused);
* ``off``: none: the whole budget runs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym

from demostudio.episode import EpisodeError, find_episodes, read_summary


@dataclass(frozen=True)
class StopRule:
    target: float
    evals: int
    """How many of the last evaluations are averaged (1: the first that reaches it)."""
    source: str
    """Where the target comes from, as the console line says it."""

    def reached(self, returns: Sequence[float]) -> bool:
        recent = list(returns)[-self.evals :]
        return len(recent) == self.evals and sum(recent) / self.evals >= self.target

    def describe(self) -> str:
        which = (
            "an evaluation's mean return"
            if self.evals == 1
            else f"the mean of the last {self.evals} evaluations' returns"
        )
        return f"stops once {which} reaches {self.target:g} ({self.source})"


def demos_mean_return(demos: Sequence[str | Path]) -> float | None:
    """The mean return of the demo episodes under ``demos`` (files or folders); None when
    there are none or a return is not finite. A file that cannot be read is left to the demo
    loader, which names it."""
    returns = []
    for path in find_episodes(list(demos)):
        try:
            returns.append(float(read_summary(path).total_return))
        except (EpisodeError, OSError):
            continue
    if not returns or not all(math.isfinite(r) for r in returns):
        return None
    return sum(returns) / len(returns)


def env_threshold(env_id: str) -> float | None:
    """The registered env spec's ``reward_threshold`` (None: the env has none)."""
    try:
        threshold = gym.spec(env_id).reward_threshold
    except gym.error.Error:
        return None
    return float(threshold) if threshold is not None else None


def stop_rule(
    stop_when: str,
    stop_return: float | None,
    stop_evals: int,
    demos: Sequence[str | Path],
    env_id: str,
) -> StopRule | None:
    """The run's stop rule (None: it runs its whole budget); ValueError naming the flag when
    ``--stop-when`` asks for a target the run cannot have."""
    if stop_return is not None:
        return StopRule(float(stop_return), stop_evals, "--stop-return")
    if stop_when == "off":
        return None
    mean = demos_mean_return(demos) if demos and stop_when in ("auto", "demos") else None
    if mean is not None:
        return StopRule(mean, stop_evals, "the demos' mean return; --stop-when off runs it all")
    if stop_when == "demos":
        raise ValueError("--stop-when demos: expected --demos with episodes, got none")
    threshold = env_threshold(env_id) if stop_when in ("auto", "threshold") else None
    if threshold is not None:
        source = f"{env_id}'s reward threshold; --stop-when off runs it all"
        return StopRule(threshold, stop_evals, source)
    if stop_when == "threshold":
        raise ValueError(f"--stop-when threshold: {env_id} has no reward threshold")
    return None


__all__ = ["StopRule", "demos_mean_return", "env_threshold", "stop_rule"]

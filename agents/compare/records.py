"""What a comparison plans and records: its settings, a run's spec (the plan of one run,
picklable for worker processes), a finished run's summary (one row of ``OUT/results.jsonl``,
read back as hostile input), the demos' facts and the references an agent is measured
against."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from demostudio.episode import EpisodeError
from demostudio.episode.jsonfile import read_json_lines

FINAL_EVAL_SEED = 1_000_000
"""Reset seed of the final evaluations (+ the run's seed) and of the random policy's."""
RESULTS_FILE = "results.jsonl"
TABLE_FILE = "results.md"
CURVES_FILE = "learning_curves.png"


class CompareSettings(Protocol):
    """What a comparison needs (``demostudio compare``'s config has these fields)."""

    env: str
    demos: tuple[Path, ...]
    algos: tuple[str, ...]
    seeds: int
    first_seed: int
    budget: int
    out: Path
    threshold: float | None
    eval_every: int
    eval_episodes: int
    final_eval_episodes: int
    jobs: int
    overrides: str
    device: str
    restart: bool


class RunSpec(NamedTuple):
    """One training run of a comparison (picklable, for worker processes)."""

    algo: str
    seed: int
    env: str
    demos: tuple[str, ...]
    budget: int
    eval_every: int
    eval_episodes: int
    final_eval_episodes: int
    overrides: dict[str, Any]
    run_dir: str
    device: str
    threshold: float
    resume: bool = False
    """Continue this run from its latest checkpoint (an interrupted run of the same plan)."""

    def planned(self) -> dict[str, Any]:
        """What the run folder's marker records: the plan, without how this invocation
        starts it."""
        return {k: v for k, v in self._asdict().items() if k != "resume"}


class RunSummary(NamedTuple):
    algo: str
    seed: int
    final_return: float
    """Mean return of the final checkpoint over ``final_eval_episodes`` fresh episodes."""
    steps_to_threshold: int | None
    """Env steps of the first evaluation >= threshold (None: never reached)."""
    wall_s: float
    env_steps: int
    updates: int
    curve: list[tuple[int, float]]
    """(env steps, evaluation mean return) of every evaluation during training."""
    run_dir: str

    def to_json(self) -> dict[str, Any]:
        return {**self._asdict(), "curve": [list(p) for p in self.curve]}

    @staticmethod
    def from_json(d: Any) -> RunSummary:
        """A summary from its JSON object; ValueError naming the first field of the wrong
        type (the file is results.jsonl: a hand-edited or damaged row must not become a
        traceback when the table is drawn)."""
        if not isinstance(d, dict):
            raise ValueError(f"expected a JSON object, got {type(d).__name__}")
        if set(d) != set(RunSummary._fields):
            raise ValueError(f"expected the fields {list(RunSummary._fields)}, got {sorted(d)}")
        for name, kinds in _SUMMARY_TYPES.items():
            value = d[name]
            if not isinstance(value, kinds) or isinstance(value, bool):
                want = " or ".join("null" if k is type(None) else k.__name__ for k in kinds)
                raise ValueError(f"{name}: expected {want}, got {value!r:.60}")
        curve = d["curve"]
        if not isinstance(curve, list) or not all(
            isinstance(p, list)
            and len(p) == 2
            and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in p)
            for p in curve
        ):
            raise ValueError(f"curve: expected [[env steps, return], ...], got {curve!r:.60}")
        return RunSummary(**{**d, "curve": [(int(s), float(r)) for s, r in curve]})


_SUMMARY_TYPES: dict[str, tuple[type, ...]] = {
    "algo": (str,),
    "seed": (int,),
    "final_return": (int, float),
    "steps_to_threshold": (int, type(None)),
    "wall_s": (int, float),
    "env_steps": (int,),
    "updates": (int,),
    "run_dir": (str,),
}
RUN_MARKER = "compare-run.json"
"""Written into each run folder a comparison makes, before it trains: only a folder with it
is continued or restarted when a rerun finds it unfinished."""


class DemoInfo(NamedTuple):
    paths: list[Path]
    mean_return: float


class Reference(NamedTuple):
    """The returns an agent is measured against: the demos' and a random policy's."""

    demos: float
    """Mean return of the demo episodes."""
    random: float
    """Mean return of the uniformly random policy on the final evaluation's seeds."""

    def share(self, agent: float) -> float:
        """``agent / demos``: the share of the demos' return reached (nan unless the demos'
        return is positive: a ratio of negative returns means nothing)."""
        return agent / self.demos if self.demos > 0 else math.nan

    def normalised(self, agent: float) -> float:
        """``(agent - random) / (demos - random)``: 0 is random, 1 the demos (nan when the
        demos do no better than random)."""
        gap = self.demos - self.random
        return (agent - self.random) / gap if gap > 0 else math.nan


def read_results(out: Path) -> list[RunSummary]:
    """The finished runs in ``OUT/results.jsonl``, read as hostile input (a regular file of
    bounded size and line length, every row a run summary); ValueError names file and line."""
    path = out / RESULTS_FILE
    if not os.path.lexists(path):
        return []
    rows = []
    for n, row, error in read_json_lines(path, "a results file of a comparison"):
        if error is not None:
            raise error
        try:
            rows.append(RunSummary.from_json(row))
        except ValueError as exc:
            raise EpisodeError(path, f"line {n}", f"expected a run summary ({exc})") from None
    return rows


__all__ = [
    "CURVES_FILE",
    "FINAL_EVAL_SEED",
    "RESULTS_FILE",
    "RUN_MARKER",
    "TABLE_FILE",
    "CompareSettings",
    "DemoInfo",
    "Reference",
    "RunSpec",
    "RunSummary",
    "read_results",
]

"""How long a run will take on this machine, from a rate measured here: the training windows
of the newest earlier run of the same algorithm on the same env (:mod:`progress`), else of a
short calibration run that the panel starts (an ordinary ``demostudio train`` of a couple of
thousand env steps, kept per algorithm and env in the user's data folder). Never a constant:
with nothing measured yet the panel says it is measuring."""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

from demostudio.episode import env_folder_name
from demostudio.launcher.algorithms import AlgoInfo
from demostudio.launcher.progress import Progress
from demostudio.launcher.runs import RunRow
from demostudio.ui.settings import user_data_folder

CALIBRATION_BUDGET = {"env_steps": 2_000, "updates": 300}
"""A calibration run's budget: a few logging windows of 1,000 env steps (the first, filling
the replay, is left out of the rate when a later one exists)."""
CALIBRATION_PRETRAIN = 100
"""Pre-training updates of a calibration run (enough windows to time them)."""


class Estimate(NamedTuple):
    seconds: float | None
    """None: nothing measured yet."""
    rate: float | None
    """Measured env steps (or updates) per second."""
    source: str
    """Where the rate comes from, for the panel ("run r2d3-...", "a calibration run")."""


def calibration_dir(algo: str, env_id: str) -> Path:
    return user_data_folder() / "calibration" / f"{algo}-{env_folder_name(env_id)}"


def calibration_words(info: AlgoInfo, env_id: str, demos: Sequence[Path]) -> list[str]:
    """A short training run that measures this machine's rate for ``info`` on ``env_id``."""
    folder = calibration_dir(info.name, env_id)
    words = ["train", info.name, "--env", env_id, "--run-dir", str(folder)]
    words += [info.budget_flag, str(CALIBRATION_BUDGET[info.clock])]
    words += ["--eval-every", "0", "--eval-episodes", "1", "--no-tensorboard", "--no-progress"]
    for flag, updates in info.pretrain:
        if updates:
            words += [flag, str(CALIBRATION_PRETRAIN)]
    if demos and info.demos != "none":
        words += ["--demos", *map(str, demos)]
    return words


def clear_calibration(algo: str, env_id: str) -> Path:
    """Remove an earlier calibration of ``algo`` on ``env_id`` (a fresh run needs an empty
    folder); returns the folder."""
    folder = calibration_dir(algo, env_id)
    if folder.is_dir() and not folder.is_symlink():
        shutil.rmtree(folder, ignore_errors=True)
    return folder


def measured(info: AlgoInfo, runs: Iterable[RunRow]) -> tuple[Progress, str] | None:
    """The newest of ``runs`` of ``info``'s algorithm with a rate measured past its warm-up
    (a run stopped in its first window only timed the replay filling up), and its name."""
    for row in sorted(runs, key=lambda r: r.started, reverse=True):
        if row.algo == info.name and row.progress.rate("train", settled=True) is not None:
            return row.progress, f"run {row.name}"
    return None


def estimate(info: AlgoInfo, budget: int, progress: Progress | None, source: str) -> Estimate:
    """Seconds for ``budget`` (plus the algorithm's pre-training at its default length) at
    the rates of ``progress``; the start-up and the final evaluation are not counted."""
    rate = progress.rate("train") if progress is not None else None
    if progress is None or rate is None:
        return Estimate(None, None, source)
    seconds = budget / rate
    pre_rate = progress.rate("pretrain")
    if pre_rate:
        seconds += sum(updates for _, updates in info.pretrain) / pre_rate
    return Estimate(seconds, rate, source)


def remaining_seconds(row: RunRow) -> float | None:
    """A running run's time to its budget at its own current rate."""
    rate = row.progress.rate("train")
    if row.budget is None or not rate:
        return None
    return max(0.0, (row.budget - row.done) / rate)


def duration(seconds: float) -> str:
    """``45 s``, ``7 min``, ``1 h 20 min``, ``3 days 4 h``."""
    s = max(0, round(seconds))
    if s < 90:
        return f"{s} s"
    m = round(s / 60)
    if m < 90:
        return f"{m} min"
    h, m = divmod(m, 60)
    if h < 48:
        return f"{h} h {m} min" if m else f"{h} h"
    d, h = divmod(h, 24)
    return f"{d} days {h} h" if h else f"{d} days"


__all__ = [
    "CALIBRATION_BUDGET",
    "Estimate",
    "calibration_dir",
    "calibration_words",
    "clear_calibration",
    "duration",
    "estimate",
    "measured",
    "remaining_seconds",
]

"""The ``demostudio`` command lines the Train panel runs. Every button of the panel is one of
these, shown as the user would type it (``demostudio train r2d3 --env ...``), so what the
panel does can be copied to a terminal; the panel itself holds no training logic.

The panel starts them with the Python that runs the launcher (:func:`argv`), so a run uses the
same installation as the window that started it."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from demostudio.launcher.algorithms import AlgoInfo

_MAIN = "import sys; from demostudio.cli import main; sys.exit(main())"

EVAL_POINTS = 10
"""A run gets about this many evaluations on its curve (a short budget evaluates more often
than the algorithm's default period)."""
MIN_EVAL_EVERY = {"env_steps": 1_000, "updates": 100}
"""...but never more often than this (each evaluation plays whole episodes)."""


def argv(words: Sequence[str]) -> list[str]:
    """The process arguments that run ``demostudio WORDS...``."""
    return [sys.executable, "-c", _MAIN, *words]


def words_of(command: Sequence[str]) -> list[str]:
    """The ``demostudio`` words of a process's arguments (:func:`argv`'s inverse); other
    commands as they are."""
    command = list(command)
    if len(command) >= 3 and command[1:3] == ["-c", _MAIN]:
        return command[3:]
    return command


def shown(words: Sequence[str]) -> str:
    """``demostudio WORDS...`` quoted for a shell."""
    return shlex.join(["demostudio", *map(str, words)])


def eval_every(info: AlgoInfo, budget: int) -> int | None:
    """``--eval-every`` for ``budget``: about :data:`EVAL_POINTS` evaluations, or None when
    the algorithm's own period already gives that many, or when the one evaluation at the
    end is all a budget this short gets."""
    every = max(budget // EVAL_POINTS, MIN_EVAL_EVERY[info.clock])
    return every if every < min(info.default_eval_every, budget) else None


def train_words(
    info: AlgoInfo, env_id: str, run_dir: Path, budget: int, demos: Sequence[Path]
) -> list[str]:
    """``train ALGO --env ENV --run-dir RUN BUDGET_FLAG N [--demos ...] [--eval-every N]``."""
    words = ["train", info.name, "--env", env_id, "--run-dir", str(run_dir)]
    words += [info.budget_flag, str(budget)]
    if demos and info.demos != "none":
        words += ["--demos", *map(str, demos)]
    every = eval_every(info, budget)
    if every is not None:
        words += ["--eval-every", str(every)]
    return words


def extension(info: AlgoInfo, done: int, budget: int | None, more: int) -> list[str]:
    """A run that already spent its budget goes on for ``more``: the flag that raises it."""
    if budget is not None and done < budget:
        return []
    return [info.budget_flag, str(done + more)]


def resume_words(info: AlgoInfo, run_dir: Path, extra: Sequence[str] = ()) -> list[str]:
    return ["train", info.name, "--run-dir", str(run_dir), "--resume", *extra]


def coach_words(info: AlgoInfo, run_dir: Path, player: str, extra: Sequence[str] = ()) -> list[str]:
    """Continue the run in the coach window (T takes over; corrections go into its demo
    replay)."""
    words = ["coach", info.name, "--run-dir", str(run_dir), "--resume", *extra]
    return [*words, "--player", player] if player else words


def watch_words(checkpoint: Path, player: str) -> list[str]:
    """The watch window on ``checkpoint`` (T takes over from the agent)."""
    words = ["watch", str(checkpoint)]
    return [*words, "--player", player] if player else words


def evaluate_words(checkpoint: Path) -> list[str]:
    return ["evaluate", str(checkpoint)]


__all__ = [
    "argv",
    "coach_words",
    "eval_every",
    "evaluate_words",
    "extension",
    "resume_words",
    "shown",
    "train_words",
    "watch_words",
    "words_of",
]

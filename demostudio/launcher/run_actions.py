"""What the Train panel does to one of its runs: stop it, resume or coach it (an extension of
its budget), watch or evaluate its checkpoint, open its folder; each a ``demostudio`` command
(:mod:`commands`) in a process of its own (:mod:`jobs`)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from demostudio.launcher import commands
from demostudio.launcher.algorithms import AlgoInfo
from demostudio.launcher.jobs import Jobs, stop_run
from demostudio.launcher.runs import CONSOLE_FILE, RunRow
from demostudio.launcher.train_panel import TrainState


class RunActions:
    """The run actions of :class:`~demostudio.launcher.training.Trainer`, which extends it
    and makes the state below; ``refresh`` (read the runs again) is the trainer's too."""

    state: TrainState
    jobs: Jobs

    def _info(self, row: RunRow) -> AlgoInfo | None:
        info = next((a for a in self.state.algos if a.name == row.algo), None)
        if info is None:
            self.state.say(f"{row.name}: {row.algo!r} is not a registered algorithm", error=True)
        return info

    def _idle(self, row: RunRow, what: str) -> bool:
        if row.active:
            self.state.say(f"{row.name} is {row.status}: stop it before you {what}", error=True)
            return False
        return True

    def _stop(self, row: RunRow) -> None:
        why = stop_run(row.path)
        self.state.say(
            why or f"Stopping {row.name} (Ctrl-C): it saves its final checkpoint", error=bool(why)
        )
        self.refresh()

    def _resume(self, row: RunRow) -> None:
        info = self._info(row)
        if info is None or not self._idle(row, "resume it"):
            return
        if not info.resumable:
            self.state.say(f"{info.name} trains in one go and has no --resume", error=True)
            return
        if row.checkpoint is None:
            self.state.say(f"{row.name} has no checkpoint to resume from", error=True)
            return
        more = commands.extension(info, row.done, row.budget, self.state.budgets[info.name])
        self._spawn_run("train", commands.resume_words(info, row.path, more), row)

    def _coach(self, row: RunRow) -> None:
        info = self._info(row)
        if info is None or not self._idle(row, "coach it"):
            return
        if not info.coachable:
            able = ", ".join(a.name for a in self.state.algos if a.coachable)
            self.state.say(
                f"{info.name} has no demo replay for corrections: coach works with {able}",
                error=True,
            )
            return
        more = commands.extension(info, row.done, row.budget, self.state.budgets[info.name])
        self._spawn_run("coach", commands.coach_words(info, row.path, self.state.player, more), row)

    def _spawn_run(self, kind: str, words: list[str], row: RunRow) -> None:
        job = self.jobs.spawn(kind, words, row.path / CONSOLE_FILE, row.path)
        self.state.say(f"Started {job.command}")
        self.refresh()

    def _checkpoint(self, row: RunRow) -> Path | None:
        if row.checkpoint is None:
            self.state.say(f"{row.name} has no checkpoint yet", error=True)
        return row.checkpoint

    def _watch(self, row: RunRow) -> None:
        ckpt = self._checkpoint(row)
        if ckpt is not None:
            words = commands.watch_words(ckpt, self.state.player)
            job = self.jobs.spawn("watch", words, row.path / "watch.log", row.path)
            self.state.say(f"Watching: {job.command}  (T takes over)")

    def _evaluate(self, row: RunRow) -> None:
        ckpt = self._checkpoint(row)
        if ckpt is not None:
            job = self.jobs.spawn(
                "evaluate", commands.evaluate_words(ckpt), row.path / "evaluate.log", row.path
            )
            self.state.notes[row.path] = f"evaluating: {job.command}"
            self.state.say(f"Evaluating: {job.command}")

    def _folder(self, row: RunRow) -> None:
        opener = _file_manager()
        if opener is None:
            self.state.say(f"Run folder: {row.path}")
            return
        job = self.jobs.spawn(
            "open", [opener, str(row.path)], row.path / "open.log", row.path, demostudio=False
        )
        self.state.say(f"Run folder: {row.path}  ({job.command})")


def _file_manager() -> str | None:
    """The desktop's "open this folder" command, when a person can see windows."""
    from demostudio.ui.display import shows_windows

    name = "open" if sys.platform == "darwin" else "xdg-open"
    return name if shows_windows() and shutil.which(name) else None

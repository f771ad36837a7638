"""The Train panel's controller: it feeds the panel's state (the algorithms, the recordings,
the runs read from their folders, the estimate) and carries out its actions by starting
``demostudio`` commands (:mod:`commands`) in processes of their own (:mod:`jobs`).

Nothing here trains or evaluates: a run is ``demostudio train``, stop is Ctrl-C's signal,
watch, coach and evaluate are their commands, each shown in the panel as it was run."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from demostudio.episode import env_folder_name
from demostudio.launcher import commands, estimate
from demostudio.launcher.algorithms import AlgoInfo, AlgorithmCatalog
from demostudio.launcher.curve import demo_bands
from demostudio.launcher.demoset import DemoScan
from demostudio.launcher.games import recordings_folder
from demostudio.launcher.jobs import RUN_KINDS, Job, Jobs, interrupt
from demostudio.launcher.progress import Progress
from demostudio.launcher.run_actions import RunActions
from demostudio.launcher.runs import CONSOLE_FILE, RunReader, console_tail, run_folders
from demostudio.launcher.train_panel import TrainAction, TrainState
from demostudio.ui.settings import user_data_folder

REFRESH_SECONDS = 1.0
"""How often the runs are read again from their folders."""
CALIBRATE_AFTER_SECONDS = 1.5
"""A calibration starts once an algorithm without a measured rate has stayed selected this
long (not for each one the user passes over)."""


def launcher_runs_root() -> Path:
    """Where the launcher puts runs: ``$XDG_DATA_HOME/demostudio/runs/<env folder>/``."""
    return user_data_folder() / "runs"


def default_roots() -> list[Path]:
    """The launcher's runs, and ``runs/`` of the current folder (``demostudio train``'s
    default place)."""
    return [launcher_runs_root(), Path.cwd() / "runs"]


def new_run_dir(root: Path, algo: str, env_id: str, now: float | None = None) -> Path:
    """A fresh folder name ``ROOT/<env folder>/<algo>-<date>-<time>`` (made unique)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    base = root / env_folder_name(env_id) / f"{algo}-{stamp}"
    path, n = base, 2
    while path.exists():
        path, n = base.with_name(f"{base.name}-{n}"), n + 1
    return path


class Trainer(RunActions):
    """The Train panel of one game: its state and the processes it started."""

    def __init__(
        self,
        env_id: str,
        title: str,
        recordings_root: Path,
        player: str = "",
        roots: list[Path] | None = None,
    ):
        self.state = TrainState(env_id, title, player)
        self.roots = list(roots) if roots is not None else default_roots()
        self.catalog = AlgorithmCatalog()
        self.scan = DemoScan(recordings_folder(recordings_root, env_id))
        self.reader = RunReader()
        self.jobs = Jobs()
        self.calibration: Job | None = None
        self.calibration_failed: dict[str, str] = {}
        self._selected_since: tuple[str, float] = ("", 0.0)
        self._next_refresh = 0.0
        self._algos_set = False
        self._followed: Path | None = None
        self._run_actions = {
            "stop": self._stop,
            "resume": self._resume,
            "watch": self._watch,
            "coach": self._coach,
            "evaluate": self._evaluate,
            "folder": self._folder,
        }
        self._calibrations: dict[str, tuple[Progress, str] | None] = {}
        """Per algorithm, what its calibration folder measured (cleared at each refresh)."""

    # ---- keeping the state current ------------------------------------------------------
    def tick(self, now: float | None = None) -> None:
        """Called each frame: take in what the background readers found, reap processes,
        read the runs again every :data:`REFRESH_SECONDS`, update the estimate."""
        now = time.monotonic() if now is None else now
        state = self.state
        if state.demos is None and self.scan.result is not None:
            state.demos = self.scan.result
            if self.scan.error:
                state.say(self.scan.error, error=True)
        if not self._algos_set and self.catalog.ready.is_set() and state.demos is not None:
            self._algos_set = True
            if self.catalog.error:
                state.say(self.catalog.error, error=True)
            state.set_algos(self.catalog.algos)
        ended = self.jobs.poll()
        for job in ended:
            self._ended(job)
        if state.opened != self._followed:
            self._follow_opened()
        if ended or now >= self._next_refresh:
            self.refresh()
            self._next_refresh = now + REFRESH_SECONDS
        self._update_estimate(now)

    def refresh(self, keep: Path | None = None) -> None:
        """Read the game's runs again from their folders."""
        rows = [self.reader.read(p) for p in run_folders(self.state.env_id, self.roots)]
        rows.sort(key=lambda r: r.started, reverse=True)
        self.state.set_runs(rows, keep)
        self._calibrations.clear()
        self._follow_opened()

    def _follow_opened(self) -> None:
        """The opened run's demos' band (read once) and the last lines its process printed."""
        state = self.state
        row = state.opened_run
        self._followed = state.opened
        if row is None:
            state.console = []
            return
        if state.bands.get(row.path, (None, None, ()))[2] != row.demos:  # config written late
            state.bands[row.path] = ([], "", row.demos)
            threading.Thread(
                target=_read_bands, args=(state.bands, row.path, row.demos), daemon=True
            ).start()
        tail = console_tail(row.path / CONSOLE_FILE, 16 * 1024).splitlines()
        state.console = [line.rstrip() for line in tail if line.strip()][-3:]

    def _update_estimate(self, now: float) -> None:
        state, info = self.state, self.state.info
        if info is None:
            return
        next_dir = new_run_dir(self.roots[0], info.name, state.env_id)
        state.preview = commands.shown(self._start_words(info, next_dir))
        found = estimate.measured(info, state.runs)
        if found is None:
            found = self._calibrated(info)
        if found is not None:
            progress, source = found
            state.estimate = estimate.estimate(info, state.budget, progress, source)
            state.measuring = ""
            return
        state.estimate = None
        key = f"{info.name} {state.env_id}"
        if self.calibration is not None and self.calibration.running:
            state.measuring = f"measuring this machine's speed: {self.calibration.command}"
            return
        failed = self.calibration_failed.get(key)
        if failed is not None:
            state.measuring = failed
            return
        state.measuring = "measuring this machine's speed soon (a short calibration run)"
        if self._selected_since[0] != key:
            self._selected_since = (key, now)
        elif now - self._selected_since[1] >= CALIBRATE_AFTER_SECONDS and self._can_calibrate(info):
            self._calibrate(info)

    def _can_calibrate(self, info: AlgoInfo) -> bool:
        """Not while a run this launcher started trains (it would be measured slower, and
        slow the run): that run's own rows give the rate."""
        busy = self.jobs.running("train") or self.jobs.running("coach")
        return not busy and info.usable(self.state.have_demos) and self.calibration is None

    def _calibrated(self, info: AlgoInfo) -> tuple[Progress, str] | None:
        """The rate a finished calibration of ``info`` measured (read again with the runs)."""
        if info.name not in self._calibrations:
            folder = estimate.calibration_dir(info.name, self.state.env_id)
            found = None
            if (folder / "metrics.jsonl").exists() and not self._calibrating(info):
                progress = self.reader.read(folder).progress
                if progress.rate("train", settled=True) is not None:
                    found = (progress, "a calibration run")
            self._calibrations[info.name] = found
        return self._calibrations[info.name]

    def _calibrating(self, info: AlgoInfo) -> bool:
        job = self.calibration
        return job is not None and job.running and job.words[1] == info.name

    def _calibrate(self, info: AlgoInfo) -> None:
        estimate.clear_calibration(info.name, self.state.env_id)
        words = estimate.calibration_words(info, self.state.env_id, self._demo_paths(info))
        folder = estimate.calibration_dir(info.name, self.state.env_id)
        log = folder.parent / f"{folder.name}.log"
        try:
            self.calibration = self.jobs.spawn("calibrate", words, log)
        except OSError as exc:
            self.calibration_failed[f"{info.name} {self.state.env_id}"] = (
                f"could not measure this machine's speed: {exc}"
            )

    def cancel_calibration(self) -> None:
        """Stop a calibration run (a real run is starting: its own rows will give the rate)."""
        job = self.calibration
        if job is not None and job.running:
            interrupt(job.pid)
            self.jobs.wait(job, 10.0)
            estimate.clear_calibration(job.words[1], self.state.env_id)
        self.calibration = None

    def _ended(self, job: Job) -> None:
        state = self.state
        if job is self.calibration:
            self.calibration = None
            if job.exit_code != 0:
                key = f"{job.words[1]} {state.env_id}"
                why = _last_error(job.log) or f"exit code {job.exit_code}"
                self.calibration_failed[key] = f"could not measure this machine's speed: {why}"
        elif job.kind == "evaluate" and job.run_dir is not None:
            line = _last_line(job.log, "mean return") or _last_error(job.log)
            state.notes[job.run_dir] = line or f"evaluate ended with exit code {job.exit_code}"
            state.say(f"{job.run_dir.name}: {state.notes[job.run_dir]}", job.exit_code != 0)
        elif job.kind in RUN_KINDS and job.run_dir is not None and job.exit_code not in (0, 130):
            why = _last_error(job.log) or f"exit code {job.exit_code}"
            state.say(f"{job.run_dir.name} failed: {why}", error=True)
        elif job.kind in ("watch", "open") and job.exit_code not in (0, None):
            why = _last_error(job.log) or f"exit code {job.exit_code}"
            state.say(f"{job.command}: {why}", error=True)

    # ---- the panel's actions ------------------------------------------------------------
    def run_actions(self) -> bool:
        """Carry out the panel's actions; False when it asked to close."""
        keep_open = True
        for action in self.state.take_actions():
            if action.kind == "close":
                keep_open = False
            else:
                self.run_action(action)
        return keep_open

    def run_action(self, action: TrainAction) -> None:
        try:
            if action.kind == "start":
                self.start()
            elif action.kind == "copy":
                self.copy(action.run)
            elif action.run is not None:
                row = next((r for r in self.state.runs if r.path == action.run), None)
                if row is None:
                    self.state.say(f"{action.run}: no such run any more", error=True)
                else:
                    self._run_actions[action.kind](row)
        except OSError as exc:  # the run folder or log cannot be written, the command not run
            self.state.say(f"{action.kind}: {exc}", error=True)

    def _demo_paths(self, info: AlgoInfo) -> list[Path]:
        demos = self.state.demos
        if demos is None or info.demos == "none":
            return []
        return demos.demo_paths(self.state.include_left_out)

    def _start_words(self, info: AlgoInfo, run_dir: Path) -> list[str]:
        env_id, budget = self.state.env_id, self.state.budget
        return commands.train_words(info, env_id, run_dir, budget, self._demo_paths(info))

    def start(self) -> Path | None:
        """Start a new run of the selected algorithm; its folder."""
        info = self.state.info
        if info is None:
            return None
        self.cancel_calibration()
        run_dir = new_run_dir(self.roots[0], info.name, self.state.env_id)
        run_dir.mkdir(parents=True)  # the launcher's files go in before the run's own
        job = self.jobs.spawn(
            "train", self._start_words(info, run_dir), run_dir / CONSOLE_FILE, run_dir
        )
        self.state.say(f"Started {job.command}")
        self.refresh(keep=run_dir)
        return run_dir

    def shown_command(self, run: Path | None) -> str:
        """The command the view shows: the opened run's process, else what Start runs."""
        row = next((r for r in self.state.runs if r.path == run), None)
        if row is not None and row.process is not None:
            return commands.shown(commands.words_of(row.process.command))
        return self.state.preview if run is None else ""

    def copy(self, run: Path | None) -> None:
        """The command shown, onto the clipboard (to paste into a terminal)."""
        import pygame

        text = self.shown_command(run)
        if not text:
            self.state.say("This run has no command to copy: it was started outside the launcher")
            return
        try:
            pygame.scrap.put_text(text)
        except pygame.error as exc:
            self.state.say(f"Could not copy to the clipboard ({exc}): {text}", error=True)
            return
        self.state.say(f"Copied: {text}")

    def close(self) -> None:
        """The panel is closing: a calibration stops (runs, watch and coach go on)."""
        self.cancel_calibration()


def _read_bands(bands: dict, path: Path, demos: tuple[str, ...]) -> None:
    """The demos' returns of a run, read in the background (a run may name many files)."""
    bands[path] = (*demo_bands(demos), demos)


def _last_line(log: Path, containing: str) -> str:
    for line in reversed(console_tail(log).splitlines()):
        if containing in line:
            return line.strip()
    return ""


def _last_error(log: Path) -> str:
    line = _last_line(log, "error:")
    return line.split("error:", 1)[1].strip() if line else ""


__all__ = ["Trainer", "default_roots", "launcher_runs_root", "new_run_dir"]

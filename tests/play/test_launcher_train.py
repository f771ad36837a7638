"""The launcher's Train panel driven by real pygame events, with real ``demostudio`` processes:
a tiny R2D3 run on the shipped MountainCar demos goes to finished, is watched and evaluated; a
long run survives the launcher closing, is stopped (final checkpoint, status "stopped") and
resumed."""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import time

import pygame
import pytest

from demostudio.assets import SAMPLE_DEMOS
from demostudio.launcher import Launcher, jobs
from demostudio.launcher.commands import words_of
from demostudio.launcher.processes import read_process_note
from demostudio.launcher.runs import console_tail
from demostudio.launcher.train_panel import TrainFocus
from demostudio.ui.settings import user_data_folder

from .helpers import tap

pytestmark = pytest.mark.timeout(180)


def pump(launcher: Launcher) -> bool:
    alive = launcher.handle_events(pygame.event.get())
    if alive:
        launcher.draw()
    return alive


def pump_until(launcher: Launcher, done, timeout: float) -> None:
    end = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < end, "timed out"
        assert pump(launcher)
        time.sleep(0.1)
    assert pump(launcher)


def focus(launcher: Launcher, where: TrainFocus) -> None:
    for _ in range(3):
        if launcher.train.state.focus is where:
            return
        tap(pygame.K_TAB)
        assert pump(launcher)
    assert launcher.train.state.focus is where


@pytest.fixture
def started(monkeypatch):
    """Every process the launcher starts, ended with the test if it still runs."""
    found: list[jobs.Job] = []
    spawn = jobs.Jobs.spawn

    def recording(self, *args, **kwargs):
        job = spawn(self, *args, **kwargs)
        found.append(job)
        return job

    monkeypatch.setattr(jobs.Jobs, "spawn", recording)
    yield found
    for job in found:
        if job.popen.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
            job.popen.wait(10)


@pytest.fixture
def root(tmp_path, monkeypatch):
    """Recordings of MountainCar (the shipped demos); ./runs of the test is empty."""
    shutil.copytree(SAMPLE_DEMOS / "MountainCar-v0", tmp_path / "rec" / "MountainCar-v0")
    monkeypatch.chdir(tmp_path)
    return tmp_path / "rec"


def open_train(launcher: Launcher, pick: bool = True):
    if pick:
        tap(pygame.K_DOWN)  # MountainCar-v0, below CartPole
    tap(pygame.K_t, mod=pygame.KMOD_CTRL)
    assert pump(launcher)
    assert launcher.train is not None
    pump_until(launcher, lambda: launcher.train.state.algos, 60)
    return launcher.train.state


def test_a_tiny_run_goes_to_finished_and_is_watched(root, started):
    launcher = Launcher(root, player="ana")
    state = open_train(launcher)
    folder = root / "MountainCar-v0"
    episodes = len(list(folder.glob("*.h5")))
    assert state.algo == "r2d3"  # preselected: there are demos
    assert state.demos.totals().episodes == episodes and not state.demos.left_out
    focus(launcher, TrainFocus.BUDGET)
    for _ in range(12):
        tap(pygame.K_LEFT)
    assert pump(launcher)
    assert state.budget == 1_000
    tap(pygame.K_RETURN)
    assert pump(launcher)

    run = state.runs[0].path
    assert run.parent == user_data_folder() / "runs" / "MountainCar-v0"
    words = ["train", "r2d3", "--env", "MountainCar-v0", "--run-dir", str(run),
             "--total-env-steps", "1000", "--demos", str(folder)]  # fmt: skip
    assert words_of(read_process_note(run).command) == words
    assert state.status == "Started demostudio train r2d3 --env MountainCar-v0 --run-dir " + (
        f"{run} --total-env-steps 1000 --demos {folder}"
    )
    assert state.runs[0].status in ("starting", "running")
    pump_until(launcher, lambda: state.runs[0].status == "finished", 150)
    row = state.runs[0]
    assert row.done == 1_000 and row.progress.evals and row.progress.best_eval is not None
    assert row.checkpoint == run / "checkpoints" / "final.pt"
    assert read_process_note(run).exit_code == 0

    focus(launcher, TrainFocus.RUNS)
    tap(pygame.K_RETURN)  # opens the run
    assert pump(launcher)
    assert state.opened == run
    tap(pygame.K_c, mod=pygame.KMOD_CTRL)  # the run's command, to paste into a terminal
    assert pump(launcher)
    assert pygame.scrap.get_text() == shlex.join(["demostudio", *words])
    tap(pygame.K_w)
    assert pump(launcher)
    watch = started[-1]
    assert watch.kind == "watch"
    assert watch.words == ["watch", str(run / "checkpoints" / "final.pt"), "--player", "ana"]
    assert state.status.startswith(f"Watching: demostudio watch {run / 'checkpoints'}")
    watching = time.monotonic()
    tap(pygame.K_e)  # evaluate, in the background (test_evaluate_... waits for its result)
    assert pump(launcher)
    assert started[-1].words == ["evaluate", str(run / "checkpoints" / "final.pt")]
    assert state.notes[run] == f"evaluating: demostudio evaluate {run / 'checkpoints' / 'final.pt'}"

    # The runs come from their folders: a fresh launcher shows the finished run.
    tap(pygame.K_ESCAPE)
    tap(pygame.K_ESCAPE)
    assert pump(launcher)
    assert launcher.train is None and launcher.runs == {"MountainCar-v0": 1}
    again = open_train(Launcher(root, player="ana"))
    assert [(r.path, r.status) for r in again.runs] == [(run, "finished")]

    # The watch window plays the checkpoint's agent: still up once torch, the checkpoint
    # and the env are loaded (a checkpoint it cannot play ends it with an error line).
    time.sleep(max(0.0, 5.0 - (time.monotonic() - watching)))
    assert watch.popen.poll() in (None, 0), console_tail(watch.log)
    assert "error" not in console_tail(watch.log)


def test_a_run_is_stopped_saved_and_resumed(root, started):
    launcher = Launcher(root, player="ana")
    state = open_train(launcher)
    # nothing measured yet: a short calibration run starts, and gives way to a real run
    pump_until(launcher, lambda: launcher.train.calibration is not None, 20)
    calibration = launcher.train.calibration
    assert calibration.words[:7] == ["train", "r2d3", "--env", "MountainCar-v0", "--run-dir",
                                     str(user_data_folder() / "calibration" /
                                         "r2d3-MountainCar-v0"), "--total-env-steps"]  # fmt: skip
    assert "measuring this machine's speed" in state.measuring
    tap(pygame.K_RETURN)  # the default budget: 100,000 env steps, far more than we wait for
    assert pump(launcher)
    assert calibration.exit_code is not None and launcher.train.calibration is None
    run = state.runs[0].path
    job = started[-1]
    assert job.kind == "train" and os.getsid(job.pid) == job.pid != os.getsid(0)

    # Closing the launcher does not end the run; reopened, it reads the run from its folder.
    pygame.event.post(pygame.event.Event(pygame.QUIT))
    assert not pump(launcher)
    assert job.popen.poll() is None
    launcher = Launcher(root, player="ana")
    state = open_train(launcher)
    assert state.runs[0].path == run and state.runs[0].status in ("starting", "running")
    pump_until(launcher, lambda: state.runs[0].progress.rows > 0, 150)
    focus(launcher, TrainFocus.RUNS)
    tap(pygame.K_RETURN)
    tap(pygame.K_s)  # stop: Ctrl-C's signal
    assert pump(launcher)
    assert state.status.startswith("Stopping")
    pump_until(launcher, lambda: state.opened_run.status == "stopped", 60)
    row = state.opened_run
    assert (run / "checkpoints" / "final.pt").is_file() and row.checkpoint.name == "final.pt"
    assert row.progress.stop["kind"] == "interrupted"
    assert read_process_note(run).stop_requested

    tap(pygame.K_r)  # resume: the same run folder, its saved config
    assert pump(launcher)
    resume = started[-1]
    assert resume.words == ["train", "r2d3", "--run-dir", str(run), "--resume"]
    assert state.opened_run.status in ("starting", "running")
    assert words_of(read_process_note(run).command) == resume.words
    tap(pygame.K_s)
    assert pump(launcher)
    pump_until(launcher, lambda: state.opened_run.status == "stopped", 60)


@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_evaluate_brings_the_mean_return_back_into_the_panel(root, started):
    """Minutes on a busy machine: a 2,000-step run, then evaluate's ten episodes."""
    launcher = Launcher(root, player="ana")
    state = open_train(launcher)
    focus(launcher, TrainFocus.BUDGET)
    for _ in range(5):  # 100,000 env steps down to 2,000
        tap(pygame.K_LEFT)
    tap(pygame.K_RETURN)
    assert pump(launcher)
    assert state.budget == 2_000
    pump_until(launcher, lambda: state.runs[0].status == "finished", 600)
    run = state.runs[0].path
    # a window past the replay's warm-up was timed: the estimate comes from this run
    assert state.estimate.source == f"run {run.name}" and state.estimate.seconds > 0
    focus(launcher, TrainFocus.RUNS)
    tap(pygame.K_RETURN)
    tap(pygame.K_e)
    assert pump(launcher)
    pump_until(launcher, lambda: "mean return" in state.notes.get(run, ""), 600)
    assert "over 10 episodes" in state.notes[run] and "over 10 episodes" in state.status


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_calibration_run_gives_the_estimate(root, started):
    """Minutes on a busy machine: the calibration's 2,000 env steps."""
    launcher = Launcher(root, player="ana")
    state = open_train(launcher)
    assert state.estimate is None
    pump_until(launcher, lambda: launcher.train.calibration is not None, 20)
    pump_until(launcher, lambda: state.estimate is not None, 600)
    assert state.estimate.source == "a calibration run" and state.estimate.rate > 0
    assert state.estimate.seconds == pytest.approx(state.budget / state.estimate.rate)


def test_a_run_that_cannot_start_says_why(root, started):
    launcher = Launcher(root, player="ana")
    state = open_train(launcher)
    folder = root / "MountainCar-v0"
    shutil.rmtree(folder)  # the recordings went away after the panel read them
    tap(pygame.K_RETURN)
    assert pump(launcher)
    pump_until(launcher, lambda: state.runs[0].status == "failed", 60)
    row = state.runs[0]
    assert str(folder) in row.reason and "error" not in row.reason  # the one line, bare
    assert state.status == f"{row.name} failed: {row.reason}" and state.status_error
    assert read_process_note(row.path).exit_code == 2

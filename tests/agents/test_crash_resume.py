"""Training after a crash goes back to the last clean end; starting a run checks the env
first and leaves no run folder behind when it fails."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agents.core.checkpoint import latest_checkpoint, load_checkpoint, periodic_path
from agents.core.logger import read_metrics
from demostudio.cli import main

ROOT = Path(__file__).resolve().parents[2]
FLAGS = ["--env", "CartPole-v1", "--num-actors", "2", "--hidden", "16", "--lstm", "16",
         "--burn-in", "2", "--trace", "6", "--period", "3", "--batch-size", "8", "--min-replay",
         "8", "--env-steps-per-update", "8", "--eval-episodes", "1", "--no-progress",
         "--no-tensorboard", "--device", "cpu"]  # fmt: skip


def _steps(path: Path) -> int:
    return int(path.stem.split("-")[1])


def test_resume_after_a_kill_continues_from_the_newest_checkpoint(tmp_path):
    run = tmp_path / "run"
    base = ["train", "r2d2", *FLAGS, "--run-dir", str(run), "--eval-every", "0"]
    assert main([*base, "--total-env-steps", "300", "--checkpoint-every", "200"]) == 0
    assert load_checkpoint(run / "checkpoints" / "final.pt")["counters"]["env_steps"] >= 300

    # a resumed run, killed with SIGKILL once it has written periodic checkpoints past 600
    code = "import sys; from demostudio.cli import main; sys.exit(main(sys.argv[1:]))"
    argv = ["train", "r2d2", "--run-dir", str(run), "--resume", "--total-env-steps", "10000000"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", code, *argv], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            found = [_steps(p) for p in (run / "checkpoints").glob("step-*.pt")]
            if found and max(found) >= 800:
                break
            assert proc.poll() is None, "the resumed run ended on its own"
            time.sleep(0.2)
        else:
            pytest.fail("no periodic checkpoint past 800 env steps within 240 s")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    newest = max((run / "checkpoints").glob("step-*.pt"), key=_steps)
    # final.pt (300 steps) is older than the killed run's periodic checkpoints
    assert latest_checkpoint(run) == newest
    steps = load_checkpoint(newest)["counters"]["env_steps"]
    assert steps >= 800

    # a checkpoint torn by a kill mid-write (or a stray temp file) is passed over
    torn = periodic_path(run, 99_999_999)
    torn.write_bytes(newest.read_bytes()[:1000])
    (run / "checkpoints" / "step-0999999999.pt.tmp").write_bytes(b"partial")
    assert latest_checkpoint(run) == newest
    torn.unlink()

    # the next resume continues from it; evaluations fall on multiples of --eval-every
    again = ["train", "r2d2", "--run-dir", str(run), "--resume", "--no-progress"]
    assert main([*again, "--total-env-steps", str(steps + 500), "--eval-every", "200"]) == 0
    rows = read_metrics(run)
    resume = [r for r in rows if r["kind"] == "resume"]
    assert resume[-1]["env_steps"] == steps
    evals = [r["env_steps"] for r in rows if r["kind"] == "eval"]
    assert evals and all(s % 200 < 2 for s in evals[:-1])  # 2 actors: at most 1 step past


def test_train_needs_an_env_and_checks_it_before_the_demos(tmp_path, cartpole_demos, capsys):
    run = tmp_path / "r"
    # no --env and no demos: an error, not a silent CartPole run
    assert main(["train", "r2d2", "--run-dir", str(run)]) == 2
    assert "--env: expected a Gymnasium env id" in capsys.readouterr().err
    # --demos a folder without episodes: that is what is said, not a missing --env
    (tmp_path / "empty").mkdir()
    assert main(["train", "r2d3", "--demos", str(tmp_path / "empty"), "--run-dir", str(run)]) == 2
    err = capsys.readouterr().err
    assert f"--demos {tmp_path / 'empty'}: expected episode files (*.h5)" in err
    assert not run.exists()
    # a typo is reported as an unknown env, before any demo is looked at
    assert main(["train", "r2d3", "--env", "CartPol-v1", "--demos", str(tmp_path / "none"),
                 "--run-dir", str(run)]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "'CartPol-v1'" in err and "registered" in err and "episode" not in err
    # demos of another env: the run fails to start and leaves no folder behind
    assert main(["train", "r2d3", "--env", "MountainCar-v0", "--demos", str(cartpole_demos),
                 "--run-dir", str(run), "--no-progress"]) == 2  # fmt: skip
    assert not run.exists()
    # without --env, the env of the demos (they all share one)
    rc = main(["train", "r2d3", "--demos", str(cartpole_demos), *FLAGS[2:],
               "--total-env-steps", "100", "--eval-every", "0", "--run-dir", str(run)])  # fmt: skip
    assert rc == 0
    assert load_checkpoint(run)["config"]["env"] == "CartPole-v1"

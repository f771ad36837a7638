"""A stop is a stop: SIGTERM (``kill``) and SIGHUP (a closed terminal, a dropped ssh session)
end a training run as Ctrl-C does (final.pt marked interrupted, an ``interrupted`` row, the
resume hint, exit status 128 + the signal); checkpoints are also saved by wall time; a run
folder whose run left logs but no checkpoint is refused, never mixed with a second run."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agents.core.checkpoint import load_checkpoint
from agents.core.config import ReplayAgentConfig
from agents.core.logger import read_metrics
from demostudio.cli import main
from tests.agents.test_crash_resume import FLAGS, ROOT

CLI = [sys.executable, "-c", "import sys; from demostudio.cli import main; sys.exit(main())"]


def _first_row(run: Path, proc: subprocess.Popen, seconds: float = 120.0) -> None:
    """Wait until the run has logged its first progress row (kind ``train``)."""
    deadline = time.monotonic() + seconds
    while True:
        metrics = run / "metrics.jsonl"
        if metrics.exists() and any(r["kind"] == "train" for r in read_metrics(run, True)):
            return
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() < deadline, f"no progress row within {seconds:.0f} s"
        time.sleep(0.2)


def signalled_run(run: Path, signum: int, *flags: str) -> tuple[int, str]:
    """``demostudio train r2d2`` in a process of its own, sent ``signum`` once it has logged
    its first progress row; (exit status, stderr)."""
    argv = ["train", "r2d2", *FLAGS, "--run-dir", str(run), "--total-env-steps", "10000000",
            "--eval-every", "0", *flags]  # fmt: skip
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([*CLI, *argv], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        _first_row(run, proc)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, err


def assert_saved_as_interrupted(run: Path, signum: int, code: int, err: str) -> int:
    """What a stopped run leaves: the exit status, final.pt marked interrupted at the env
    steps of the last row (``interrupted``, naming the signal), and the resume hint. Returns
    those env steps."""
    name = signal.Signals(signum).name
    assert code == 128 + signum, err
    final = run / "checkpoints" / "final.pt"
    payload = load_checkpoint(final)
    steps = payload["counters"]["env_steps"]
    assert payload["interrupted"] is True and steps >= 1000
    last = read_metrics(run)[-1]
    assert last == {**last, "kind": "interrupted", "env_steps": steps, "signal": name}
    assert err.strip().splitlines()[-1] == (
        f"demostudio: interrupted by {name} at {steps} env steps, saved {final}; "
        f"`demostudio train r2d2 --run-dir {run} --resume` continues it"
    )
    return steps


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_sigterm_and_sighup_save_the_run_as_ctrl_c_does_and_resume_continues(
    signum, tmp_path, capsys
):
    run = tmp_path / "run"
    code, err = signalled_run(run, signum, "--checkpoint-every", "1000000")
    steps = assert_saved_as_interrupted(run, signum, code, err)
    assert "Traceback" not in err

    again = ["train", "r2d2", "--run-dir", str(run), "--resume", "--total-env-steps",
             str(steps + 100)]  # fmt: skip
    assert main(again) == 0
    payload = load_checkpoint(run / "checkpoints" / "final.pt")
    assert payload["interrupted"] is False and payload["counters"]["env_steps"] >= steps + 100
    kinds = [r["kind"] for r in read_metrics(run)]
    assert kinds.index("resume") > kinds.index("interrupted")


def test_a_checkpoint_is_saved_by_wall_time_between_step_checkpoints(tmp_path):
    run = tmp_path / "run"
    argv = ["train", "r2d2", *FLAGS, "--run-dir", str(run), "--total-env-steps", "1500",
            "--eval-every", "0", "--checkpoint-every", "1000000", "--keep-checkpoints", "100",
            "--checkpoint-minutes", "0.002"]  # fmt: skip
    assert main(argv) == 0
    periodic = sorted((run / "checkpoints").glob("step-*.pt"))
    steps = [load_checkpoint(p)["counters"]["env_steps"] for p in periodic]
    assert steps and all(0 < s < 1500 for s in steps)  # none due by env steps (every 1e6)
    assert ReplayAgentConfig().checkpoint_minutes == 5.0  # the default: minutes at most lost
    with pytest.raises(ValueError, match="--checkpoint-minutes: expected >= 0, got -1"):
        ReplayAgentConfig(env="CartPole-v1", checkpoint_minutes=-1).validate()


@pytest.mark.parametrize(
    ("algo", "leftover"),
    [("r2d2", "metrics.jsonl"), ("ppo", "metrics.jsonl"), ("r2d2", "tb/")],
)
def test_a_folder_with_logs_but_no_checkpoint_is_refused_not_mixed(
    algo, leftover, tmp_path, capsys
):
    """A run killed before its first checkpoint left its logs: the same command again is
    one line and leaves them as they were (PPO too, which resumes a folder by default)."""
    run = tmp_path / "run"
    run.mkdir()
    rows = "".join(json.dumps({"kind": "train", "env_steps": s}) + "\n" for s in (1000, 2000))
    if leftover == "tb/":
        (run / "tb").mkdir()
        (run / "tb" / "events.out.tfevents.1").write_bytes(b"x")
    else:
        (run / "metrics.jsonl").write_text(rows, encoding="utf-8")
    argv = ["train", algo, "--env", "CartPole-v1", "--run-dir", str(run), "--no-progress",
            "--device", "cpu"]  # fmt: skip
    assert main(argv) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"demostudio: error: {run}: expected a fresh run folder, got the {leftover} of a run "
        "that saved no checkpoint (nothing to resume; a second run would be mixed into its "
        "logs): delete the folder or pass another --run-dir"
    ]
    assert sorted(p.name for p in run.iterdir()) == ["metrics.jsonl" if leftover != "tb/" else "tb"]
    if leftover != "tb/":
        assert (run / "metrics.jsonl").read_text(encoding="utf-8") == rows


def test_a_closed_terminal_saves_the_run_marked_interrupted(tmp_path):
    """The run's terminal hangs up (a closed window, a dropped ssh session): SIGHUP, and
    every later write to that terminal fails; the progress bar on it does not stop the run
    from saving its state."""
    import fcntl
    import pty
    import select
    import termios
    import threading

    run = tmp_path / "run"
    flags = [f for f in FLAGS if f != "--no-progress"]
    argv = ["train", "r2d2", *flags, "--run-dir", str(run), "--total-env-steps", "10000000",
            "--eval-every", "0"]  # fmt: skip
    assert "--no-progress" not in argv  # a progress bar on the terminal

    master, slave = pty.openpty()

    def own_terminal() -> None:  # a session whose controlling terminal is the pty
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([*CLI, *argv], env=env, stdin=slave, stdout=slave, stderr=slave,
                            preexec_fn=own_terminal)  # fmt: skip
    os.close(slave)

    shown = threading.Event()  # set: the terminal goes away

    def show() -> None:  # the terminal takes what the run writes
        while not shown.is_set():
            if select.select([master], [], [], 0.1)[0]:
                with contextlib.suppress(OSError):
                    os.read(master, 65536)

    terminal = threading.Thread(target=show, daemon=True)
    terminal.start()
    try:
        _first_row(run, proc)
    finally:
        shown.set()
        terminal.join()
        os.close(master)  # the terminal hangs up
    try:
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + signal.SIGHUP
    payload = load_checkpoint(run / "checkpoints" / "final.pt")
    assert payload["interrupted"] is True
    last = read_metrics(run)[-1]
    assert last["kind"] == "interrupted" and last["signal"] == "SIGHUP"
    assert last["env_steps"] == payload["counters"]["env_steps"]


def test_a_run_failing_before_a_checkpoint_in_a_folder_it_did_not_make_takes_its_files_back(
    tmp_path, capsys, monkeypatch
):
    """Its config.json and logs would make the folder one that a rerun refuses; what was in
    the folder before stays."""
    from agents.registry import get_algorithm

    run = tmp_path / "run"
    run.mkdir()
    (run / "notes.txt").write_text("mine", encoding="utf-8")

    def broken(self, ctx):
        raise ValueError("broken start")

    monkeypatch.setattr(get_algorithm("r2d2").agent_cls, "start", broken)
    argv = ["train", "r2d2", *FLAGS, "--run-dir", str(run), "--total-env-steps", "100",
            "--eval-every", "0", "--tensorboard"]  # fmt: skip
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == "demostudio: error: broken start"
    assert sorted(p.name for p in run.iterdir()) == ["notes.txt"]
    monkeypatch.undo()
    assert main(argv) == 0
    assert (run / "checkpoints" / "final.pt").exists() and (run / "notes.txt").exists()


ALGO_FLAGS = {
    "bc": ["--hidden", "16", "--max-updates", "100000", "--val-every", "20", "--eval-every",
           "0", "--eval-episodes", "1"],
    "ppo": ["--num-envs", "2", "--rollout-length", "16", "--segment-length", "8",
            "--total-env-steps", "10000000", "--eval-episodes", "1", "--eval-every", "0",
            "--hidden", "16", "--lstm", "16"],
}  # fmt: skip


@pytest.mark.parametrize("algo", ["bc", "ppo"])
def test_sigterm_stops_bc_and_ppo_as_any_run(algo, tmp_path, cartpole_demos, capsys, monkeypatch):
    """The same run shell: SIGTERM after the second progress row saves final.pt marked
    interrupted, with the row and the hint (BC, which has no --resume, says so)."""
    import agents.core.run as run_module

    rows = []
    log_row = run_module._Shell.log_row

    def kill_on_second_row(self, *args):
        rows.append(log_row(self, *args))
        if len(rows) == 2:
            assert signal.getsignal(signal.SIGTERM) is not before  # the run's handler
            os.kill(os.getpid(), signal.SIGTERM)
        return rows[-1]

    monkeypatch.setattr(run_module._Shell, "log_row", kill_on_second_row)
    before = signal.getsignal(signal.SIGTERM)  # SIG_DFL, or Ray's from an earlier test's init
    run = tmp_path / "run"
    demos = ["--demos", str(cartpole_demos)] if algo == "bc" else []
    argv = ["train", algo, "--env", "CartPole-v1", *demos, *ALGO_FLAGS[algo], "--no-progress",
            "--no-tensorboard", "--device", "cpu", "--run-dir", str(run)]  # fmt: skip
    assert main(argv) == 143
    final = run / "checkpoints" / "final.pt"
    payload = load_checkpoint(final)
    steps = payload["counters"]["env_steps"]
    assert payload["interrupted"] is True and (steps > 0) == (algo == "ppo")
    assert read_metrics(run)[-1]["kind"] == "interrupted"
    then = (f"`demostudio train ppo --run-dir {run} --resume` continues it" if algo == "ppo"
            else "bc has no --resume: train again with another --run-dir")  # fmt: skip
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"demostudio: interrupted by SIGTERM at {steps} env steps, saved {final}; {then}"
    )
    assert signal.getsignal(signal.SIGTERM) is before  # restored after the run

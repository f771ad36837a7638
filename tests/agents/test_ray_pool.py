"""Actors in Ray processes (a local Ray with 2 CPUs, started once for the module): training
through the pool with the replay-ratio and the on-policy schedules, an actor process killed
mid-run is replaced with the counters intact, and Ctrl-C shuts Ray down and still writes the
final checkpoint."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from agents.core.config import ReplayAgentConfig
from agents.core.logger import read_metrics
from agents.core.policy import EpsilonGreedy, epsilon_ladder, selector_part
from agents.core.run import train
from agents.r2d2 import R2D2
from tests.agents.test_seams import SMALL, ToyOnPolicy

ray = pytest.importorskip("ray")

RAY = dict(actor_procs=2, num_actors=1, actor_chunk_steps=10, weight_sync_every=2)


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray for the module (each pool joins it instead of starting its own)."""
    from agents.core.ray_access import auth_mode

    assert auth_mode(True) in ("token", "disabled")  # the user's own choice is kept
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(")")[-1].split()[0] == "Z")


class KillOnce(R2D2):
    """R2D2 whose run SIGKILLs actor process 0 once, after ``kill_at`` env steps."""

    def __init__(self, cfg, kill_at: int):
        super().__init__(cfg)
        self.kill_at = kill_at
        self.killed = 0
        self.seen: list[tuple[int, int, int, list[int]]] = []
        """(env steps, updates, restarts, actor pids) after each iteration."""

    def after_iteration(self, ctx) -> bool:
        pool = ctx.pool()
        if ctx.counters.env_steps >= self.kill_at and pool.restarts == 0 and not self.killed:
            self.killed = pool.pids[0]
            os.kill(pool.pids[0], signal.SIGKILL)
        self.seen.append(
            (ctx.counters.env_steps, ctx.learner.updates, pool.restarts, list(pool.pids))
        )
        return False


def test_actor_process_killed_mid_run_is_replaced_and_training_continues(local_ray, tmp_path):
    cfg = ReplayAgentConfig(**{**SMALL, **RAY}, total_env_steps=500, eval_every=0,
                            env_steps_per_update=2.0, run_dir=tmp_path / "run")  # fmt: skip
    agent = KillOnce(cfg, kill_at=150)
    result = train(agent)
    steps = [s for s, *_ in agent.seen]
    assert agent.killed and not _alive(agent.killed)
    assert steps == sorted(steps) and result.env_steps >= 500  # counters never went back
    after = [row for row in agent.seen if row[2] == 1]
    assert after, "the killed actor process was replaced"
    assert after[-1][3][0] != agent.killed and agent.killed not in after[-1][3]
    assert all(pid != os.getpid() for pid in after[-1][3])  # actors in other processes
    # learning went on at the learner's replay ratio after the kill (0.5 update per step)
    # at the first row with updates, u = int((s - start) / 2): start is s - 2u or one less
    first_learning = next(s - 2 * u for s, u, *_ in agent.seen if u > 0)
    due = {int((result.env_steps - start) / 2.0) for start in (first_learning - 1, first_learning)}
    assert result.updates in due
    assert after[-1][1] > after[0][1]
    rows = [r for r in read_metrics(tmp_path / "run") if r["kind"] == "train"]
    assert rows[-1]["actor_restarts"] == 1.0 and "policy_lag" in rows[-1]
    assert (tmp_path / "run" / "checkpoints" / "final.pt").exists()


def test_on_policy_schedule_runs_through_the_ray_pool(local_ray, tmp_path):
    cfg = ReplayAgentConfig(**{**SMALL, **RAY}, total_env_steps=160, eval_every=0,
                            run_dir=tmp_path / "onpolicy")  # fmt: skip
    ToyOnPolicy.rollouts, ToyOnPolicy.deviations = [], []
    result = train(ToyOnPolicy(cfg))
    assert result.env_steps >= 160 and len(ToyOnPolicy.rollouts) >= 2
    first = ToyOnPolicy.rollouts[0][1]
    assert {"mu", "log_prob", "value"} <= set(first.extras)  # extras crossed processes
    assert (first.extras["mu"][first.mask] > 0).all()


def test_the_epsilon_ladder_spans_every_actor_process():
    whole = EpsilonGreedy(epsilon_ladder(6))
    parts = [selector_part(whole, k * 2, k * 2 + 2) for k in range(3)]
    np.testing.assert_array_equal(np.concatenate([p.epsilons for p in parts]), whole.epsilons)
    assert selector_part(object(), 0, 1) is None  # unknown selectors are built per process


def test_ray_settings_are_checked_and_token_auth_stays_on_unless_turned_off():
    with pytest.raises(ValueError, match="--ray-address: expected with --actor-procs"):
        ReplayAgentConfig(env="CartPole-v1", ray_address="10.0.0.1:6379").validate()
    code = (
        "import os; from agents.core.ray_access import auth_mode; "
        "print(auth_mode(True), auth_mode(False), os.environ['RAY_AUTH_MODE'])"
    )
    env = {k: v for k, v in os.environ.items() if k != "RAY_AUTH_MODE"}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert run.stdout.split() == ["token", "disabled", "disabled"], run.stderr
    env["RAY_AUTH_MODE"] = "disabled"  # the user turned it off themselves: kept
    code = "from agents.core.ray_access import auth_mode; print(auth_mode(True))"
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert run.stdout.split() == ["disabled"], run.stderr


def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().split(")")[-1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.add(child)
            todo.append(child)
    return out


def _trained(run: Path) -> bool:
    return (run / "metrics.jsonl").exists() and any(r["kind"] == "train" for r in read_metrics(run))


@pytest.mark.slow  # a Ray of its own in a subprocess: about 30 s on a loaded 2-core machine
def test_ctrl_c_shuts_ray_down_and_writes_the_final_checkpoint(tmp_path):
    run = tmp_path / "run"
    cmd = [sys.executable, "-c", "from demostudio.cli import main; raise SystemExit(main())",
           "train", "r2d2", "--env", "CartPole-v1", "--actor-procs", "1", "--num-actors", "1",
           "--hidden", "16", "--lstm", "16", "--total-env-steps", "1000000", "--eval-every", "0",
           "--no-progress", "--no-tensorboard", "--run-dir", str(run)]  # fmt: skip
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen(cmd, env=env, start_new_session=True, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not _trained(run):  # Ray is up and the learner has logged a row
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, "no training row within 120 s"
        time.sleep(0.5)
    ray_procs = _descendants(proc.pid)
    assert ray_procs, "Ray's processes run under the training process"
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert (run / "checkpoints" / "final.pt").exists()
    time.sleep(1.0)
    assert not [p for p in ray_procs if _alive(p)], "Ray's processes outlived the run"


def test_a_joined_cluster_gets_this_checkout_as_py_modules():
    from agents.core.ray_pool import _code_runtime_env

    modules = _code_runtime_env()["py_modules"]
    assert sorted(Path(m).name for m in modules) == ["agents", "demostudio"]
    assert all((Path(m) / "__init__.py").exists() for m in modules)


@contextlib.contextmanager
def ray_head(token: str | None, cpus: int = 1) -> Iterator[str]:
    """A Ray head (``ray start --head --block`` in a session of its own, so that it and only
    it is stopped after), with token authentication when ``token`` is given; its address."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    temp = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))  # Ray's socket paths are short
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env.update(HOME=str(temp), RAY_AUTH_MODE="token" if token else "disabled")
    if token:
        env["RAY_AUTH_TOKEN"] = token
    start = [str(Path(sys.executable).with_name("ray")), "start", "--head", f"--port={port}",
             f"--num-cpus={cpus}", "--block", "--include-dashboard=false",
             f"--temp-dir={temp}"]  # fmt: skip
    head = subprocess.Popen(start, env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert head.poll() is None and time.monotonic() < deadline, "no Ray head"
            time.sleep(0.3)
        yield f"127.0.0.1:{port}"
    finally:  # `ray start --block` stops the processes it started on SIGTERM
        head.send_signal(signal.SIGTERM)
        try:
            head.wait(timeout=60)
        finally:
            with contextlib.suppress(ProcessLookupError):  # any left behind
                os.killpg(head.pid, signal.SIGKILL)
            head.wait()
            shutil.rmtree(temp, ignore_errors=True)


@pytest.mark.slow
def test_training_joins_a_running_cluster_with_ray_address(tmp_path):
    with ray_head(None, cpus=2) as address:
        run = tmp_path / "run"
        cmd = [sys.executable, "-c", "from demostudio.cli import main; raise SystemExit(main())",
               "train", "r2d2", "--env", "CartPole-v1", "--actor-procs", "1", "--num-actors",
               "1", "--ray-address", address, "--no-ray-auth", "--hidden", "16",
               "--lstm", "16", "--total-env-steps", "600", "--eval-every", "0", "--no-progress",
               "--no-tensorboard", "--run-dir", str(run)]  # fmt: skip
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), RAY_AUTH_MODE="disabled")
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        assert (run / "checkpoints" / "final.pt").exists()

"""Actors in Ray processes vs in this process; prints one JSON object.

  python benchmarks/bench_ray.py throughput [--procs 0 1 2] [--baseline-src DIR]
      env steps/s and learner updates/s, side by side in one run, at the same replay ratio:
      in-process (--actor-procs 0) vs --actor-procs 1 vs 2, on CartPole-v1 at two workloads:
      ``default`` (R2D2's default config) and ``issue`` (the source R2D2's CartPole
      workload: 1 env per actor process, 12 sequences of 5 + 10 steps per update, one update
      per 10 env steps, 20,000 steps; targets: <= 13 s wall, >= 1,500 env steps/s). With
      --baseline-src (a source tree of the code before, e.g. ``git archive main | tar -x -C
      DIR``) the in-process runs are also made with that code, in a subprocess, to show the
      in-process path is no slower.
      Ray is started once before the Ray runs; its start-up is reported on its own.
  python benchmarks/bench_ray.py speed [--baseline-src DIR] [--rounds 3]
      the learner alone (updates/s at batch 32 x 31 steps, R2D2's default network) and the
      in-process actor alone (env steps/s at 1 and 16 envs), this code vs the code in DIR,
      alternating subprocesses so that load from other processes hits both alike.
  python benchmarks/bench_ray.py cartpole [--seeds 0 1 2] [--procs 0 2]
      R2D2 on CartPole-v1: wall seconds until an evaluation mean >= 475 (median of seeds),
      in-process vs Ray (target <= 60 s).

The source R2D2 itself, run beside ours at its own workload: ``bench_r2d2_source.py``.

Each figure comes from one training run through the run shell (``agents.core.run.train``):
wall time, env steps, updates, the seconds spent in learner updates and (Ray runs) in
waiting for the actors' chunks, which say which side bounds the wall time; ``uptime`` is
recorded because the machine may be shared.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

WORKLOADS: dict[str, dict] = {
    "default": dict(total_env_steps=20_000),
    "issue": dict(
        total_env_steps=20_000,
        num_actors=1,
        batch_size=12,
        burn_in=5,
        trace=10,
        period=5,
        env_steps_per_update=10.0,
    ),
}
COMMON = dict(env="CartPole-v1", eval_every=0, progress=False, tensorboard=False, device="cpu")
STEPS = 0
"""--steps: env steps per throughput run instead of the workload's (0: the workload's)."""


def one_run(workload: str, procs: int, seed: int, work: Path, **extra) -> dict:
    """One training run; wall time, env steps/s and updates/s over the whole run."""
    from agents.r2d2 import R2D2Config, train_r2d2

    fields = {**COMMON, **WORKLOADS[workload], **extra, "seed": seed}
    if STEPS:
        fields["total_env_steps"] = STEPS
    if procs:
        fields["actor_procs"] = procs
    run = work / f"{workload}-p{procs}-s{seed}-{time.time_ns()}"
    with _timed() as spent:
        t = time.perf_counter()
        res = train_r2d2(R2D2Config(run_dir=run, **fields))
        wall = time.perf_counter() - t
    timing = {"learner_update_s": round(spent["update"], 2)}
    if procs:
        timing["waiting_for_actors_s"] = round(spent["pool_step"], 2)
    return {
        "wall_s": round(wall, 2),
        **timing,
        "env_steps": res.env_steps,
        "updates": res.updates,
        "env_steps_per_s": round(res.env_steps / wall, 1),
        "updates_per_s": round(res.updates / wall, 1),
        "solved_at": res.solved_at,
    }


@contextlib.contextmanager
def _timed():
    """Seconds spent in learner updates and in the actor pool's ``step`` (for Ray: waiting for
    and receiving a chunk) during the block: which side bounds the wall time."""
    from agents.core.learner import Learner
    from agents.core.ray_pool import RayActorPool

    spent = {"update": 0.0, "pool_step": 0.0}
    patched = [(Learner, "update", "update"), (RayActorPool, "step", "pool_step")]
    originals = [getattr(cls, name) for cls, name, _ in patched]

    def timing(fn, key):
        def inner(*a, **k):
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                spent[key] += time.perf_counter() - t

        return inner

    for (cls, name, key), fn in zip(patched, originals):
        setattr(cls, name, timing(fn, key))
    try:
        yield spent
    finally:
        for (cls, name, _), fn in zip(patched, originals):
            setattr(cls, name, fn)


def baseline_run(src: str, workload: str, seed: int, work: Path) -> dict:
    """The same in-process run with the code in ``src`` (a subprocess)."""
    env = dict(os.environ, PYTHONPATH=src)
    cmd = [sys.executable, __file__, "_one", workload, "--seed", str(seed), "--work", str(work),
           "--steps", str(STEPS)]  # fmt: skip
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True, cwd=src)
    return json.loads(out.stdout)


def start_ray() -> float:
    """A local Ray (2 CPUs at least) that the Ray runs join; seconds it took."""
    from agents.core.ray_pool import _auth_mode

    _auth_mode(True)
    import ray

    t = time.perf_counter()
    ray.init(address="local", num_cpus=max(2, os.cpu_count() or 1), include_dashboard=False,
             log_to_driver=False)  # fmt: skip
    return time.perf_counter() - t


def throughput(args) -> dict:
    work = Path(args.work)
    out: dict = {"benchmark": "ray-throughput", "env": "CartPole-v1", "load_before": _uptime()}
    if any(args.procs):
        out["ray_startup_s"] = round(start_ray(), 2)
    for workload in args.workloads:
        rows: dict[str, dict] = {}
        for procs in args.procs:
            if procs == 0 and args.baseline_src:
                rows["in_process_before"] = baseline_run(args.baseline_src, workload, 0, work)
            key = "in_process" if procs == 0 else f"actor_procs_{procs}"
            rows[key] = one_run(workload, procs, 0, work)
        base = rows.get("in_process")
        if base:
            for row in rows.values():
                row["env_steps_per_s_vs_in_process"] = round(
                    row["env_steps_per_s"] / base["env_steps_per_s"], 2
                )
        config = {**WORKLOADS[workload], **({"total_env_steps": STEPS} if STEPS else {})}
        out[workload] = {"config": config, **rows}
    out["load_after"] = _uptime()
    return out


def cartpole(args) -> dict:
    work = Path(args.work)
    out: dict = {"benchmark": "ray-cartpole-wall-to-475", "load_before": _uptime()}
    if any(args.procs):
        out["ray_startup_s"] = round(start_ray(), 2)
    for procs in args.procs:
        target = dict(total_env_steps=args.budget, eval_every=5000, eval_episodes=5,
                      stop_return=475.0)  # fmt: skip
        runs = [one_run("default", procs, s, work, **target) for s in args.seeds]
        walls = [r["wall_s"] if r["solved_at"] is not None else float("inf") for r in runs]
        med = statistics.median(walls)
        key = "in_process" if procs == 0 else f"actor_procs_{procs}"
        out[key] = {
            "median_wall_s_to_475": None if med == float("inf") else med,
            "solved": sum(w != float("inf") for w in walls),
            "of": len(runs),
            "runs": runs,
        }
    out["load_after"] = _uptime()
    return out


def speed_once() -> dict:
    """Learner updates/s and actor env steps/s of the code on sys.path (one process)."""
    import numpy as np
    import torch

    from agents.core.actor import VectorActor
    from agents.core.agent import EnvInfo
    from agents.core.policy import BatchPolicy
    from agents.core.preprocess import make_preprocessor
    from agents.core.sequences import EndBehavior
    from agents.r2d2 import R2D2, R2D2Config
    from benchmarks.bench_agents import time_learner
    from demostudio.episode import make_env

    cfg = R2D2Config(env="CartPole-v1", device="cpu")
    no_ends, with_ends = time_learner(cfg, torch.device("cpu"), rounds=10)
    out = {"learner_updates_per_s": round(2 / (no_ends + with_ends), 1)}
    env = make_env(cfg.env)
    info = EnvInfo(cfg.env, env, make_preprocessor(env.observation_space))
    agent = R2D2(cfg)
    net = agent.build_networks(info)["main"]
    for n in (1, 16):
        policy = BatchPolicy.copy_of(net, agent.acting_selector(n), n, torch.device("cpu"),
                                     np.random.default_rng(0))  # fmt: skip
        actor = VectorActor([lambda: make_env(cfg.env) for _ in range(n)], policy,
                            info.preprocess, cfg.sequence_length, cfg.period,
                            EndBehavior.ZERO_PAD, seed=0)  # fmt: skip
        for _ in range(20):
            actor.step()
        steps, t = 0, time.perf_counter()
        while steps < 3000:
            steps += actor.step().env_steps
        out[f"actor_env_steps_per_s_{n}_envs"] = round(steps / (time.perf_counter() - t), 1)
        actor.close()
    return out


def speed(args) -> dict:
    out: dict = {"benchmark": "learner-and-actor-speed", "load_before": _uptime()}
    trees = {"after": str(Path(__file__).resolve().parents[1])}
    if args.baseline_src:
        trees["before"] = args.baseline_src
    runs: dict[str, list[dict]] = {k: [] for k in trees}
    for _ in range(args.rounds):
        for name, src in trees.items():
            env = dict(os.environ, PYTHONPATH=src)
            cmd = [sys.executable, __file__, "_speed"]
            res = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True, cwd=src)
            runs[name].append(json.loads(res.stdout))
    for name, rows in runs.items():
        out[name] = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    if "before" in out:
        out["after_over_before"] = {
            k: round(out["after"][k] / out["before"][k], 2) for k in out["after"]
        }
    out["load_after"] = _uptime()
    return out


def _uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("which", choices=["throughput", "speed", "cartpole", "_one", "_speed"])
    p.add_argument("workload", nargs="?", default="issue", help="_one: the workload")
    p.add_argument("--procs", type=int, nargs="*", default=[0, 1, 2])
    p.add_argument("--workloads", nargs="*", default=["issue", "default"])
    p.add_argument("--baseline-src", default=None)
    p.add_argument("--seeds", type=int, nargs="*", default=[0, 1, 2])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--steps", type=int, default=0, help="throughput: env steps per run")
    p.add_argument("--rounds", type=int, default=3, help="speed: alternating rounds")
    p.add_argument("--budget", type=int, default=100_000)
    p.add_argument("--work", default="/tmp/demostudio-bench-ray")
    args = p.parse_args(argv)
    Path(args.work).mkdir(parents=True, exist_ok=True)
    global STEPS
    STEPS = args.steps if args.which in ("throughput", "_one") else 0
    import torch

    torch.set_num_threads(1)
    if args.which == "_one":
        out = one_run(args.workload, 0, args.seed, Path(args.work))
    elif args.which == "_speed":
        out = speed_once()
    elif args.which == "speed":
        out = speed(args)
    elif args.which == "throughput":
        out = throughput(args)
    else:
        if argv is None and "--procs" not in sys.argv:
            args.procs = [0, 2]
        out = cartpole(args)
    json.dump(out, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())

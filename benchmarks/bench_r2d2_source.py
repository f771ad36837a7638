"""Our R2D2 beside the source R2D2 at the source's own workload, in one run; prints JSON.

  python benchmarks/bench_r2d2_source.py --source-r2d2 DIR [--baseline-src DIR] [--rounds 3]
      [--workloads matched issue] [--modes in_process actor_procs_1] [--source-threads 1]

DIR is a checkout of the source R2D2 (``r2d2_algo/r2d2.py``) with the gym shim it needs in
``DIR/shim`` (``gym`` over Gymnasium); nothing is fetched. ``--baseline-src`` is another tree
of this project (``git archive main | tar -x -C DIR``): its runs are made the same way, so
the code before a change is measured beside the code after it.

The source's workload: CartPole-v1, 20,000 env steps, one env, 12 sequences of 5 burn-in +
10 steps per update, one update per 10 env steps once 10,000 env steps are in (999 updates).
Ours runs it through the CLI a user types, ``demostudio train r2d2 --env CartPole-v1
--total-env-steps 20000 --num-actors 1 --batch-size 12 --burn-in 5 --trace 10 --period 5
--env-steps-per-update 10 --eval-every 0 --mirror none --no-progress --no-tensorboard``,
plus per workload:

* ``matched``: ``--min-replay 2300 --hidden 32 --lstm 50``: learning starts when 2,300
  sequences are in, about 10,000 env steps (the updates made are reported), and the network
  does the source's work per step (21,979 parameters against its 21,890; 21,448
  multiply-adds per step against its 21,376).
* ``issue``: our defaults otherwise (learning after 64 sequences: ~1,970 updates; an MLP
  torso, an LSTM fed the previous action and reward, a dueling head: 47,043 parameters).
  ``flops_per_update`` says how much more work that is.

Every run is a fresh process, timed from its start to its exit (``wall_s``: the whole wait
a user sees, imports and Ray's start-up included), with the CPU seconds it and its children
used (``cpu_s``; not Ray's workers; in process, the figure the machine's load moves least).
``loop_sps`` is env steps per second of the training loop as each program counts it: the
source's own ``SPS`` counter (its last print), ours from metrics.jsonl (the sum of each logged
window's steps / sps) less the seconds its actor pool took to start (``pool_start_s``: envs
made and, with actor processes, Ray and its workers started; the source's counter starts
after its env is made). ``acting_phase_sps`` covers the first 10,000 steps (no update in
either program: acting alone), ``learning_phase_sps`` the rest (acting and the updates).

Runs are interleaved round by round, in a rotating order, with ``os.getloadavg()`` before and
after each: on a shared machine compare only figures taken side by side. The source runs
with one torch thread (``OMP_NUM_THREADS=1``, as ours runs by default) unless
``--source-threads`` also names ``default``. ``summary`` holds the medians and the ratios
(ours over the source's: above 1 is faster).

``updates`` lists the learner alone (one subprocess per tree and workload, alternating, the
fastest of three rounds): ms per update at each workload's shape, the update's FLOPs (matmuls
forward and backward, Adam) and the floor, those FLOPs at the single-thread rate of a
1024x1024 matmul measured in the same process.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STEPS = 20_000
OURS = ["--env", "CartPole-v1", "--num-actors", "1", "--batch-size", "12", "--burn-in", "5",
        "--trace", "10", "--period", "5", "--env-steps-per-update", "10", "--eval-every", "0",
        "--mirror", "none", "--no-progress", "--no-tensorboard"]  # fmt: skip
WORKLOADS = {
    "matched": ["--min-replay", "2300", "--hidden", "32", "--lstm", "50"],
    "issue": [],
}
MODES = {"in_process": [], "actor_procs_1": ["--actor-procs", "1"]}
SHAPE = {"obs": 4, "actions": 2, "batch": 12, "burn_in": 5, "trace": 10}
POOL_START = "pool_start.json"


def source_updates() -> int:
    """The source updates at every 10th step after step 10,000 (10,010 .. 19,990: 999)."""
    return len(range(10_010, STEPS, 10))


def ours_macs_per_step(hidden: int, lstm: int) -> int:
    """Multiply-adds of one step of our network (MLP torso, LSTM fed the one-hot previous
    action and reward, dueling head)."""
    o, a = SHAPE["obs"], SHAPE["actions"]
    torso = o * hidden + hidden * hidden
    core = 4 * lstm * (hidden + a + 1 + lstm)
    return torso + core + 2 * lstm * hidden + hidden * (1 + a)


def source_macs_per_step(hidden: int = 64) -> int:
    """The source's network: GRU(obs -> 64), then 64-64-64-actions."""
    o, a = SHAPE["obs"], SHAPE["actions"]
    return 3 * hidden * (o + hidden) + 2 * hidden * hidden + hidden * a


def update_flops(macs: int, params: int, rows_fwd: int, rows_grad: int) -> int:
    """Forward (target + online) and backward (twice the forward) matmul FLOPs and Adam's
    ~12 FLOPs per parameter."""
    return 2 * macs * (2 * rows_fwd + 2 * rows_grad) + 12 * params


def flops(workload: str) -> dict:
    b, burn, trace = SHAPE["batch"], SHAPE["burn_in"], SHAPE["trace"]
    hidden, lstm = (32, 50) if workload == "matched" else (64, 64)
    params = {"matched": 21_979, "issue": 47_043}[workload]
    # ours: target and online over burn-in + trace + 1 steps, gradients after the burn-in
    ours = update_flops(ours_macs_per_step(hidden, lstm), params, b * (burn + trace + 1),
                        b * (trace + 1))  # fmt: skip
    # the source: 15 steps each, gradients through all of them
    source = update_flops(source_macs_per_step(), 21_890, b * (burn + trace), b * (burn + trace))
    return {"ours": ours, "source": source, "ours_over_source": round(ours / source, 2)}


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def timed(cmd: list[str], env: dict, cwd: str) -> tuple[subprocess.CompletedProcess, dict]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = _load()
    t = time.perf_counter()
    out = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stderr[-3000:]}")
    return out, {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "load_before": load,
                 "load_after": _load()}  # fmt: skip


def run_source(src: Path, threads: str, work: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(src / "shim"))
    if threads == "1":
        env["OMP_NUM_THREADS"] = "1"
    cwd = tempfile.mkdtemp(dir=work)
    cmd = [sys.executable, str(src / "r2d2_algo" / "r2d2.py"), "--env-id", "CartPole-v1",
           "--total-timesteps", str(STEPS)]  # fmt: skip
    out, row = timed(cmd, env, cwd)
    # its counter: env steps / seconds since its loop began, printed every 10th update (the
    # first at step 10,010, then every 100 steps)
    sps = [int(x) for x in re.findall(r"^SPS: (\d+)", out.stdout, re.M)]
    returns = re.findall(r"mean return (\S+)", out.stdout)
    loop, first = STEPS / sps[-1], 10_010 / sps[0]
    return {**row, "loop_sps": sps[-1], "loop_s": round(loop, 2),
            **phases(first, 10_010, loop - first, STEPS - 10_010),
            "updates": source_updates(), "last_mean_return": float(returns[-1])}  # fmt: skip


def phases(acting_s: float, acting_steps: int, learning_s: float, learning_steps: int) -> dict:
    """Env steps/s before learning starts (acting alone) and after (acting and updates)."""
    return {"acting_phase_sps": round(acting_steps / acting_s, 1),
            "learning_phase_sps": round(learning_steps / learning_s, 1)}  # fmt: skip


def run_ours(tree: Path, workload: str, mode: str, work: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    run_dir = Path(tempfile.mkdtemp(dir=work)) / "run"
    cmd = [sys.executable, __file__, "--_cli", "train", "r2d2", *OURS, "--total-env-steps",
           str(STEPS), *WORKLOADS[workload], *MODES[mode], "--run-dir", str(run_dir)]  # fmt: skip
    _, row = timed(cmd, env, str(tree))
    if mode != "in_process":
        row["cpu_s"] = None  # the actor process is Ray's child, not ours
    row["pool_start_s"] = json.loads((run_dir / POOL_START).read_text())
    # as the source, whose counter starts after its env is made: less the pool's start
    loop, acting, steps, updates, returns = -row["pool_start_s"], 0.0, 0, 0, []
    for line in (run_dir / "metrics.jsonl").read_text().splitlines():
        r = json.loads(line)
        if r.get("kind") == "train" and "sps" in r:
            loop += (r["env_steps"] - steps) / r["sps"]
            steps, updates = r["env_steps"], r["updates"]
            returns.append(r.get("episode_return"))
            if steps <= 10_000:  # a row every 1,000 steps: the first 10,000 steps
                acting, acting_steps = loop, steps
    return {**row, "loop_sps": round(steps / loop, 1), "loop_s": round(loop, 2),
            **phases(acting, acting_steps, loop - acting, steps - acting_steps),
            "updates": updates, "last_mean_return": returns[-1]}  # fmt: skip


def cli_timing_pool_start(argv: list[str]) -> int:
    """``demostudio`` with ``argv``, noting how long the actor pool took to start (envs made;
    with actor processes, Ray and its workers started) in ``RUN_DIR/pool_start.json``."""
    from agents.core.run import RunContext
    from demostudio.cli import main as cli

    make_pool = RunContext.pool
    spent = []

    def pool(self):
        if self._pool is not None:
            return self._pool
        t = time.perf_counter()
        made = make_pool(self)
        spent.append(time.perf_counter() - t)
        return made

    RunContext.pool = pool
    code = cli(argv)
    run_dir = Path(argv[argv.index("--run-dir") + 1])
    (run_dir / POOL_START).write_text(json.dumps(round(sum(spent), 3)))
    return code


def update_timing(workload: str) -> dict:
    """The learner alone at the workload's shape (run in the tree on sys.path)."""
    import numpy as np
    import torch

    from agents.core.agent import EnvInfo
    from agents.core.learner import Learner
    from agents.core.preprocess import make_preprocessor
    from agents.r2d2 import R2D2, R2D2Config
    from benchmarks.bench_agents import fake_batch
    from demostudio.episode import make_env

    torch.set_num_threads(1)
    hidden, lstm = (32, 50) if workload == "matched" else (64, 64)
    cfg = R2D2Config(env="CartPole-v1", device="cpu", batch_size=12, burn_in=5, trace=10,
                     period=5, hidden=hidden, lstm=lstm, mirror="none")  # fmt: skip
    torch.manual_seed(0)
    env = make_env(cfg.env)
    agent = R2D2(cfg)
    info = EnvInfo(cfg.env, env, make_preprocessor(env.observation_space))
    # this tree's learner takes its own settings; a --baseline-src tree's may take the config
    front: tuple = (cfg,) if "cfg" in inspect.signature(Learner).parameters else ()
    try:
        from agents.core.learner import Optim

        settings = {"optim": Optim.of(cfg)}
    except ImportError:
        settings = {}
    learner = Learner(agent.build_networks(info), *front, torch.device("cpu"), agent.loss(),
                      agent.target_rules(), **settings)  # fmt: skip
    rng = np.random.default_rng(0)
    samples = [fake_batch(cfg, info.preprocess.spec, 2, False, rng) for _ in range(10)]
    for s in samples[:5]:  # one sequence in six starts its episode (its burn-in is learned)
        s.batch.prev_action[:2, 0] = -1
    for s in samples * 2:
        learner.update(s)
    blocks = []
    for _ in range(15):
        t = time.thread_time()
        for s in samples:
            learner.update(s)
        blocks.append((time.thread_time() - t) / len(samples) * 1e3)
    a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
    rates = []
    for _ in range(5):
        t = time.thread_time()
        a @ b
        rates.append(2 * 1024**3 / (time.thread_time() - t) / 1e9)
    gflops = max(rates)
    ours = flops(workload)["ours"]
    floor = ours / (gflops * 1e9) * 1e3
    best, median = min(blocks), statistics.median(blocks)
    return {"update_ms_min": round(best, 3), "update_ms_median": round(median, 3),
            "flops": ours, "matmul_gflops_1_thread": round(gflops, 1),
            "floor_ms": round(floor, 3), "update_over_floor": round(best / floor, 1)}  # fmt: skip


def _median(rows: list[dict], key: str) -> float | None:
    vals = [r[key] for r in rows if r.get(key) is not None]
    return round(statistics.median(vals), 2) if vals else None


def summarise(runs: list[dict]) -> dict:
    out: dict = {}
    source = [r for r in runs if r["who"] == "source" and r["threads"] == "1"]
    s_sps, s_wall = _median(source, "loop_sps"), _median(source, "wall_s")
    s_cpu = _median(source, "cpu_s")
    s_act, s_learn = _median(source, "acting_phase_sps"), _median(source, "learning_phase_sps")
    for r in runs:
        if r["who"] == "source":
            continue
        key = f"{r['who']}/{r['workload']}/{r['mode']}"
        if key in out:
            continue
        rows = [x for x in runs if x["who"] == r["who"] and x["workload"] == r["workload"]
                and x["mode"] == r["mode"]]  # fmt: skip
        sps, wall, cpu = _median(rows, "loop_sps"), _median(rows, "wall_s"), _median(rows, "cpu_s")
        out[key] = {"loop_sps": sps, "wall_s": wall, "cpu_s": cpu,
                    "updates": _median(rows, "updates"),
                    "loop_sps_over_source": round(sps / s_sps, 2),
                    "source_wall_over_wall": round(s_wall / wall, 2),
                    "source_cpu_over_cpu": round(s_cpu / cpu, 2) if cpu else None,
                    "acting_phase_sps_over_source": round(
                        _median(rows, "acting_phase_sps") / s_act, 2),
                    "learning_phase_sps_over_source": round(
                        _median(rows, "learning_phase_sps") / s_learn, 2)}  # fmt: skip
    out["source (1 thread)"] = {"loop_sps": s_sps, "wall_s": s_wall, "cpu_s": s_cpu,
                                "acting_phase_sps": s_act, "learning_phase_sps": s_learn,
                                "updates": source_updates()}  # fmt: skip
    return out


def main(argv: list[str] | None = None) -> int:
    global STEPS
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--source-r2d2", type=Path, help="a checkout of the source R2D2 (with shim/)")
    p.add_argument("--baseline-src", type=Path, default=None, help="another tree of this project")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--workloads", nargs="*", default=list(WORKLOADS), choices=list(WORKLOADS))
    p.add_argument("--modes", nargs="*", default=list(MODES), choices=list(MODES))
    p.add_argument("--source-threads", nargs="*", default=["1"], choices=["1", "default"])
    p.add_argument(
        "--steps",
        type=int,
        default=STEPS,
        help="env steps per run (the source learns after 10,000: more than 10,010)",
    )
    p.add_argument("--no-update-timing", action="store_true", help="skip the learner-alone part")
    p.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "bench-r2d2-source")
    p.add_argument("--_update", default=None, help=argparse.SUPPRESS)
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--_cli"]:
        return cli_timing_pool_start(argv[1:])
    args = p.parse_args(argv)
    STEPS = args.steps
    if args._update:
        json.dump(update_timing(args._update), sys.stdout)
        return 0
    if args.source_r2d2 is None or not (args.source_r2d2 / "r2d2_algo" / "r2d2.py").is_file():
        p.error("--source-r2d2: expected a checkout holding r2d2_algo/r2d2.py")
    if args.steps <= 10_010:
        p.error("--steps: expected more than 10,010 (the source learns after 10,000)")
    args.work.mkdir(parents=True, exist_ok=True)
    trees = {"ours": Path(__file__).resolve().parents[1]}
    if args.baseline_src:
        trees["baseline"] = args.baseline_src.resolve()
    jobs = [("source", t, "", "") for t in args.source_threads]
    jobs += [(who, "", w, m) for who in trees for w in args.workloads for m in args.modes]
    out: dict = {"benchmark": "r2d2-vs-source", "command": " ".join(sys.argv),
                 "trees": {k: str(v) for k, v in trees.items()},
                 "flops_per_update": {w: flops(w) for w in args.workloads},
                 "ours_flags": {w: [*OURS, *WORKLOADS[w]] for w in args.workloads},
                 "cpus": os.cpu_count(), "runs": []}  # fmt: skip
    for rnd in range(args.rounds):
        shift = rnd % len(jobs)
        for who, threads, workload, mode in jobs[shift:] + jobs[:shift]:
            if who == "source":
                row = run_source(args.source_r2d2, threads, args.work)
            else:
                row = run_ours(trees[who], workload, mode, args.work)
            row = {"round": rnd, "who": who, "threads": threads or "1", "workload": workload,
                   "mode": mode, **row}  # fmt: skip
            print(json.dumps(row), file=sys.stderr)
            out["runs"].append(row)
    out["summary"] = summarise(out["runs"])
    if not args.no_update_timing:  # alternating trees, the fastest of three rounds
        timings: dict[str, list[dict]] = {}
        for _ in range(3):
            for who, tree in trees.items():
                for w in args.workloads:
                    cmd = [sys.executable, __file__, "--_update", w]
                    env = dict(os.environ, PYTHONPATH=str(tree))
                    res = subprocess.run(cmd, env=env, cwd=tree, capture_output=True, text=True,
                                         check=True)  # fmt: skip
                    row = {**json.loads(res.stdout), "load": _load()}
                    timings.setdefault(f"{who}/{w}", []).append(row)
        out["updates"] = {k: min(v, key=lambda r: r["update_ms_min"]) for k, v in timings.items()}
    json.dump(out, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())

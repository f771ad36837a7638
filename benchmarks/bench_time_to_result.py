"""What a user waits for a result at the defaults: wall clock from the command to the first
evaluation at the target, today's code beside the new in one run; prints JSON.

  python benchmarks/bench_time_to_result.py [--tasks mc cartpole-r2d2 cartpole-reactor]
      [--seeds 3] [--baseline-src DIR] [--hold-steps 10000] [--timeout 300]

Each run is the command a user types, ``demostudio train ALGO --env ENV ...`` at its
defaults, plus ``--seed S`` and a run folder in a temporary one, started as a fresh process
(imports, env and actor start-up, Ray's included, are in the wait). ``--baseline-src`` is
another tree of this project (``git archive 10922fb | tar -x -C DIR``), run the same way
with ``PYTHONPATH=DIR``; the two trees alternate seed by seed, in a rotating order, with
``os.getloadavg()`` beside each run.

The tasks (target: an evaluation's mean return, or DoorKey's success rate):

* ``mc``: R2D3, MountainCar-v0, the shipped demos (demos/MountainCar-v0): -120, and the run
  then stops by its stop rule (``--stop-when auto``: the demos' mean return);
* ``doorkey``: R2D3, MiniGrid-DoorKey-8x8-v0, the 10 shipped demos: 0.9 success;
* ``cartpole-r2d2``: R2D2, CartPole-v1, ``--actor-procs 1``: 475;
* ``cartpole-reactor``: Reactor, CartPole-v1: 475, and held: every later evaluation still
  at 475. The stop rule would end the run at the first such evaluation, so this task adds
  ``--stop-when off --total-env-steps HOLD`` (the time to the first is the same: the rule
  acts only after an evaluation is logged) to see the evaluations after it; ``--hold-steps
  0`` runs it at the defaults, stopping at the first (``held`` is then not reported).

The parent polls the run's metrics.jsonl (every 50 ms) and notes when each row appears:
``to_target_s`` is the wall from the process's start to the first evaluation row at or above
the target (``to_target_steps`` its env steps), ``first_row_s`` the wall to the run's first
row (the start-up: imports, env, actors), ``evals`` every evaluation as [env steps, return
or success, seconds], ``stopped`` whether the run ended by itself before its budget,
``wall_s`` the whole process. ``summary`` holds the medians over seeds per task and tree (a
run that never reached the target counts as slower than any that did).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMOS = ROOT / "demos"

TASKS: dict[str, dict] = {
    "mc": {
        "args": ["r2d3", "--env", "MountainCar-v0", "--demos", str(DEMOS / "MountainCar-v0")],
        "key": "eval_return",
        "target": -120.0,
    },
    "doorkey": {
        "args": [
            "r2d3",
            "--env",
            "MiniGrid-DoorKey-8x8-v0",
            "--demos",
            str(DEMOS / "MiniGrid-DoorKey-8x8-v0"),
        ],
        "key": "eval_success",
        "target": 0.9,
    },
    "cartpole-r2d2": {
        "args": ["r2d2", "--env", "CartPole-v1", "--actor-procs", "1"],
        "key": "eval_return",
        "target": 475.0,
    },
    "cartpole-reactor": {
        "args": ["reactor", "--env", "CartPole-v1"],
        "key": "eval_return",
        "target": 475.0,
        "hold": True,
    },
}
BUDGET = 100_000
"""``--total-env-steps``'s default: a run that ends below it stopped by itself."""
CLI = "import sys; from demostudio.cli import main; sys.exit(main(sys.argv[1:]))"


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def run_once(tree: Path, task: str, seed: int, work: Path, hold_steps: int,
             timeout: float) -> dict:  # fmt: skip
    """One ``demostudio train`` of ``task`` from ``tree``, timed as described above."""
    spec = TASKS[task]
    run_dir = Path(tempfile.mkdtemp(dir=work)) / "run"
    hold = bool(spec.get("hold")) and hold_steps > 0
    extra = ["--stop-when", "off", "--total-env-steps", str(hold_steps)] if hold else []
    cmd = [sys.executable, "-c", CLI, "train", *spec["args"], "--seed", str(seed),
           "--run-dir", str(run_dir), *extra]  # fmt: skip
    env = dict(os.environ, PYTHONPATH=str(tree), SDL_VIDEODRIVER="dummy")
    log = (run_dir.parent / "stderr.txt").open("w")
    load_before = _load()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=tree, stdout=log, stderr=subprocess.STDOUT)
    metrics = run_dir / "metrics.jsonl"
    seen, rows, partial = 0, [], b""
    timed_out = False
    while True:
        code = proc.poll()
        now = time.perf_counter() - t0
        if metrics.exists():
            with metrics.open("rb") as f:
                f.seek(seen)
                chunk = f.read()
            seen += len(chunk)
            lines = (partial + chunk).split(b"\n")
            partial = lines.pop()
            rows += [(now, json.loads(line)) for line in lines if line.strip()]
        if code is not None:
            break
        if now > timeout:
            proc.send_signal(signal.SIGTERM)
            timed_out = True
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        time.sleep(0.05)
    wall = time.perf_counter() - t0
    log.close()
    evals = [(r["env_steps"], r.get(spec["key"], math.nan), round(t, 2))
             for t, r in rows if r["kind"] == "eval"]  # fmt: skip
    hit = next((i for i, e in enumerate(evals) if e[1] >= spec["target"]), None)
    last_steps = max((r["env_steps"] for _, r in rows), default=0)
    budget = hold_steps if hold else BUDGET
    row = {
        "task": task,
        "seed": seed,
        "to_target_s": evals[hit][2] if hit is not None else None,
        "to_target_steps": evals[hit][0] if hit is not None else None,
        "first_row_s": round(rows[0][0], 2) if rows else None,
        "first_eval": list(evals[0]) if evals else None,
        "stopped": proc.returncode == 0 and not timed_out and last_steps < budget,
        "env_steps": last_steps,
        "wall_s": round(wall, 2),
        "exit": proc.returncode,
        "timed_out": timed_out,
        "evals": [list(e) for e in evals],
        "load_before": load_before,
        "load_after": _load(),
    }
    if hold:  # None: the run did not play its hold window to the end
        later = [e[1] >= spec["target"] for e in evals[hit:]] if hit is not None else [False]
        row["held"] = None if timed_out and all(later) else all(later)
    if proc.returncode != 0 and not timed_out:
        row["error"] = (run_dir.parent / "stderr.txt").read_text()[-2000:]
    return row


def _median(values: list[float | None]) -> float | None:
    if not values:
        return None
    m = statistics.median([math.inf if v is None else v for v in values])
    return None if math.isinf(m) else round(m, 2)


def summarise(runs: list[dict]) -> dict:
    out: dict = {}
    for task in dict.fromkeys(r["task"] for r in runs):
        for tree in dict.fromkeys(r["tree"] for r in runs):
            mine = [r for r in runs if r["task"] == task and r["tree"] == tree]
            if not mine:
                continue
            s = {
                "to_target_s": _median([r["to_target_s"] for r in mine]),
                "to_target_steps": _median([r["to_target_steps"] for r in mine]),
                "reached": sum(r["to_target_s"] is not None for r in mine),
                "stopped": sum(r["stopped"] for r in mine),
                "wall_s": _median([r["wall_s"] for r in mine]),
                "first_row_s": _median([r["first_row_s"] for r in mine]),
                "seeds": len(mine),
            }
            if "held" in mine[0]:
                s["held"] = sum(r["held"] is True for r in mine)
            out.setdefault(task, {})[tree] = s
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tasks", default="mc,cartpole-r2d2,cartpole-reactor",
                   help=f"comma-separated, of {','.join(TASKS)}")  # fmt: skip
    p.add_argument("--seeds", type=int, default=3, help="seeds 0..N-1 per task and tree")
    p.add_argument("--baseline-src", type=Path, default=None, help="another tree of this project")
    p.add_argument("--hold-steps", type=int, default=10_000,
                   help="cartpole-reactor's budget (0: the defaults' stop)")  # fmt: skip
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per run (then stopped)")
    p.add_argument("--doorkey-timeout", type=float, default=900.0)
    p.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "bench-ttr")
    args = p.parse_args(argv)
    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
    unknown = [t for t in tasks if t not in TASKS]
    if unknown:
        p.error(f"--tasks: expected names from {','.join(TASKS)}, got {','.join(unknown)}")
    args.work.mkdir(parents=True, exist_ok=True)
    trees = {"new": ROOT}
    if args.baseline_src:
        if not (args.baseline_src / "agents").is_dir():
            p.error(f"--baseline-src {args.baseline_src}: expected a tree of this project")
        trees["today"] = args.baseline_src.resolve()
    out: dict = {"benchmark": "time-to-result", "command": " ".join(sys.argv),
                 "trees": {k: str(v) for k, v in trees.items()}, "cpus": os.cpu_count(),
                 "targets": {t: TASKS[t]["target"] for t in tasks}, "runs": []}  # fmt: skip
    names = list(trees)
    for task in tasks:
        timeout = args.doorkey_timeout if task == "doorkey" else args.timeout
        for seed in range(args.seeds):
            order = names[seed % len(names) :] + names[: seed % len(names)]
            for tree in order:
                row = {"tree": tree, **run_once(trees[tree], task, seed, args.work,
                                                args.hold_steps, timeout)}  # fmt: skip
                print(json.dumps(row), file=sys.stderr, flush=True)
                out["runs"].append(row)
    out["summary"] = summarise(out["runs"])
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

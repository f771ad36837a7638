"""Training on a GPU against the CPU; each command prints one JSON object.

  python benchmarks/bench_device.py learner [--envs ENV ...] [--devices cpu cuda]
      R2D2's learner alone at the default config (batch 32, burn-in 10 + trace 20 + 1):
      milliseconds per update on each device for each env's observations (CartPole's
      vector, MiniGrid's grid view, Atari's 84x84 frames), side by side in one process, and
      the ratio cpu / cuda (> 1: the GPU is faster).
  python benchmarks/bench_device.py algos [--device cuda] [--env CartPole-v1] [--steps 3000]
                                          [--algos ...]
      Every registered algorithm trained as a user would, through ``demostudio train ...
      --device DEVICE`` on --env (for the algorithms that need demos, the env's shipped
      demos/<env>/; without them those are left out), then its run evaluated with
      ``demostudio evaluate RUN --device cpu``: a checkpoint made on a GPU must play on a
      machine without one. Per algorithm: both exit codes, wall seconds, the last logged env
      steps and updates per second (sps, ups), and the last line of any failure.

The GPU needs nothing here that the CPU does not: without CUDA, ``--devices cuda`` and
``--device cuda`` are reported as unavailable instead of measured.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
LEARNER_ENVS = ["CartPole-v1", "MiniGrid-DoorKey-8x8-v0", "ALE/Pong-v5"]

# What each algorithm needs beyond --env to train briefly and leave a checkpoint ({demos}:
# the env's shipped demos).
ALGO_ARGS: dict[str, list[str]] = {
    "r2d2": [],
    "r2d3": ["--demos", "{demos}"],
    "dqfd": ["--demos", "{demos}", "--pretrain-updates", "100"],
    "sqil": ["--demos", "{demos}"],
    "bc": ["--demos", "{demos}", "--max-updates", "300"],
    "reactor": [],
    "ppo": [],
    "rnd-ppo": [],
}
STEP_ARGS = ["--total-env-steps", "{steps}", "--eval-every", "{steps}", "--checkpoint-every",
             "{steps}"]  # fmt: skip
CLI = [sys.executable, "-c", "import sys; from demostudio.cli import main; sys.exit(main())"]


def cuda_ok() -> bool:
    return torch.cuda.is_available()


def learner(args) -> dict:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_agents import time_learner

    from agents.r2d2 import R2D2Config

    torch.set_num_threads(args.threads)
    rows = []
    for env in args.envs:
        row: dict = {"env": env}
        for dev in args.devices:
            if dev == "cuda" and not cuda_ok():
                row[f"{dev}_ms"] = "unavailable (torch sees no GPU)"
                continue
            cfg = R2D2Config(env=env, device=dev)
            no_ends, with_ends = time_learner(cfg, torch.device(dev), rounds=args.rounds)
            row[f"{dev}_ms"] = round(1000 * no_ends, 3)
            row[f"{dev}_ms_with_episode_ends"] = round(1000 * with_ends, 3)
        if isinstance(row.get("cpu_ms"), float) and isinstance(row.get("cuda_ms"), float):
            row["cpu_over_cuda"] = round(row["cpu_ms"] / row["cuda_ms"], 2)
        rows.append(row)
    return {
        "benchmark": "device-learner",
        "algorithm": "r2d2",
        "torch": torch.__version__,
        "gpu": torch.cuda.get_device_name(0) if cuda_ok() else None,
        "cpu_threads": args.threads,
        "rounds": args.rounds,
        "envs": rows,
    }


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""


def _rates(run: Path) -> dict:
    """The last logged env steps and learner updates per second of a run (none logged: {})."""
    from agents.core.logger import read_metrics

    rows = [r for r in read_metrics(run) if r.get("kind") == "train"]
    last = rows[-1] if rows else {}
    return {k: round(float(last[k]), 1) for k in ("sps", "ups") if k in last}


def one_algo(name: str, env_id: str, device: str, steps: int, work: Path) -> dict:
    from demostudio.episode import env_folder_name

    run = work / f"{name}-{device}-{time.time_ns()}"
    fill = {"steps": str(steps), "demos": str(ROOT / "demos" / env_folder_name(env_id))}
    extra = [] if name == "bc" else STEP_ARGS
    args = [a.format(**fill) for a in [*ALGO_ARGS[name], *extra]]
    train_cmd = [*CLI, "train", name, "--env", env_id, *args,
                 "--device", device, "--run-dir", str(run), "--seed", "0", "--no-progress",
                 "--no-tensorboard"]  # fmt: skip
    env = {**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"}
    t = time.perf_counter()
    tr = subprocess.run(train_cmd, capture_output=True, text=True, env=env, cwd=ROOT)
    out: dict = {
        "algorithm": name,
        "train_rc": tr.returncode,
        "train_wall_s": round(time.perf_counter() - t, 1),
    }
    if tr.returncode != 0:
        out["train_error"] = _last_line(tr.stderr or tr.stdout)
        return out
    try:
        out.update(_rates(run))
    except (OSError, ValueError):
        pass
    ev = subprocess.run([*CLI, "evaluate", str(run), "--device", "cpu", "--episodes", "2"],
                        capture_output=True, text=True, env=env, cwd=ROOT)  # fmt: skip
    out["evaluate_on_cpu_rc"] = ev.returncode
    out["evaluate_on_cpu"] = _last_line(ev.stdout if ev.returncode == 0 else ev.stderr)
    return out


def algos(args) -> dict:
    if args.device == "cuda" and not cuda_ok():
        return {"benchmark": "device-algos", "device": "cuda", "error": "torch sees no GPU"}
    from demostudio.episode import env_folder_name

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    shipped = (ROOT / "demos" / env_folder_name(args.env)).is_dir()
    left_out = [a for a in args.algos if "{demos}" in ALGO_ARGS[a] and not shipped]
    rows = []
    for name in (a for a in args.algos if a not in left_out):
        rows.append(one_algo(name, args.env, args.device, args.steps, work))
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)  # progress, if cut short
    ok = sum(r["train_rc"] == 0 and r.get("evaluate_on_cpu_rc") == 0 for r in rows)
    return {
        "benchmark": "device-algos",
        "device": args.device,
        "gpu": torch.cuda.get_device_name(0) if cuda_ok() else None,
        "env": args.env,
        "steps": args.steps,
        "passed": f"{ok}/{len(rows)}",
        "left_out_no_shipped_demos": left_out,
        "runs": rows,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = p.add_subparsers(dest="which", required=True)
    lp = sub.add_parser("learner")
    lp.add_argument("--envs", nargs="*", default=LEARNER_ENVS)
    lp.add_argument("--devices", nargs="*", default=["cpu", "cuda"], choices=["cpu", "cuda"])
    lp.add_argument("--rounds", type=int, default=10)
    lp.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    ap = sub.add_parser("algos")
    ap.add_argument("--device", default="cuda", choices=["cpu", "cuda"])
    ap.add_argument("--env", default="CartPole-v1")
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--algos", nargs="*", default=list(ALGO_ARGS), choices=list(ALGO_ARGS))
    ap.add_argument("--work", default="/tmp/demostudio-bench-device")
    args = p.parse_args(argv)
    report = learner(args) if args.which == "learner" else algos(args)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

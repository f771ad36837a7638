"""How long a short training run takes as a whole process, this tree beside another:
``demostudio train`` from the interpreter's start to its exit, for a run that learns for a
moment (so the process pays for everything a real run pays for before its first update:
imports, the env, the networks, the replay, the optimiser's first step).

    python benchmarks/bench_startup.py --baseline-src BASE --rounds 5

Each run is its own process, the two trees interleaved round by round, with the load
average beside each figure. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
RUNS = {
    "r2d2-cartpole": ["r2d2", "--env", "CartPole-v1", "--total-env-steps", "600",
                      "--min-replay", "100", "--eval-every", "0"],
    "bc-mountaincar": ["bc", "--env", "MountainCar-v0", "--demos", "demos/MountainCar-v0",
                       "--max-updates", "20", "--eval-every", "0"],
}  # fmt: skip
CLI = "import sys; from demostudio.cli import main; sys.exit(main())"


def one(tree: Path, argv: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-c", CLI, "train", *argv, "--no-progress", "--no-tensorboard",
               "--run-dir", str(Path(tmp) / "run")]  # fmt: skip
        env = dict(os.environ, PYTHONPATH=str(tree), SDL_VIDEODRIVER="dummy")
        load = os.getloadavg()[0]
        t = time.perf_counter()
        done = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t
    if done.returncode != 0:
        raise SystemExit(f"bench_startup: {tree}: {' '.join(argv)} failed:\n{done.stderr[-2000:]}")
    return {"wall_s": round(wall, 2), "load_before": round(load, 2)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--baseline-src", type=Path, help="another tree of this project")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--runs", nargs="*", choices=sorted(RUNS), default=sorted(RUNS))
    args = p.parse_args(argv)
    trees = {"ours": HERE}
    if args.baseline_src is not None:
        trees["baseline"] = args.baseline_src.resolve()
    rows = []
    for r in range(args.rounds):
        for name in args.runs:
            for who, tree in trees.items():
                rows.append({"round": r, "run": name, "who": who, **one(tree, RUNS[name])})
                print(json.dumps(rows[-1]), file=sys.stderr)
    summary: dict = {}
    for name in args.runs:
        med = {who: statistics.median(x["wall_s"] for x in rows if x["run"] == name
                                      and x["who"] == who) for who in trees}  # fmt: skip
        summary[name] = {f"{who}_wall_s_median": round(v, 2) for who, v in med.items()}
        if "baseline" in med:
            summary[name]["saved_s"] = round(med["baseline"] - med["ours"], 2)
    out = {"benchmark": "startup", "command": sys.argv, "trees": {k: str(v) for k, v in
           trees.items()}, "cpus": os.cpu_count(), "runs": rows, "summary": summary}  # fmt: skip
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

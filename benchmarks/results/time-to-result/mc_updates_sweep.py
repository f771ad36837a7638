"""R2D3 MountainCar to the first -120 at a few update settings; one JSON row per run.

python benchmarks/results/time-to-result/mc_updates_sweep.py VARIANTS SEEDS OUT_DIR
(VARIANTS: comma-separated names of CONF; SEEDS: comma-separated integers)
"""

import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CLI = "import sys; from demostudio.cli import main; sys.exit(main(sys.argv[1:]))"
CONF = {
    "default": [],
    "b16": ["--batch-size", "16"],
    "e4": ["--env-steps-per-update", "4"],
    "b64e4": ["--batch-size", "64", "--env-steps-per-update", "4"],
    "t10": ["--burn-in", "5", "--trace", "10", "--period", "5"],
    "b16t10": ["--batch-size", "16", "--burn-in", "5", "--trace", "10", "--period", "5"],
}


def main() -> None:
    names, seeds = sys.argv[1].split(","), [int(s) for s in sys.argv[2].split(",")]
    out = Path(sys.argv[3])
    out.mkdir(parents=True, exist_ok=True)
    demos = str(ROOT / "demos" / "MountainCar-v0")
    for seed, name in itertools.product(seeds, names):
        run = out / f"{name}-s{seed}"
        start, load = time.perf_counter(), os.getloadavg()[0]
        argv = ["train", "r2d3", "--env", "MountainCar-v0", "--demos", demos, "--seed", str(seed),
                "--run-dir", str(run), "--no-progress", *CONF[name]]  # fmt: skip
        env = dict(os.environ, SDL_VIDEODRIVER="dummy")
        subprocess.run([sys.executable, "-c", CLI, *argv], check=True, cwd=ROOT, env=env)
        evals = [json.loads(line) for line in (run / "metrics.jsonl").open() if '"eval"' in line]
        hit = next((e for e in evals if e["eval_return"] >= -120), None)
        row = {"conf": name, "seed": seed, "wall": round(time.perf_counter() - start, 1),
               "load": round(load, 2), "hit_steps": hit and hit["env_steps"],
               "hit_updates": hit and hit.get("updates"),
               "evals": [(e["env_steps"], e["eval_return"]) for e in evals]}  # fmt: skip
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()

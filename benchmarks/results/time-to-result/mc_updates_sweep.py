import json, subprocess, sys, os, time, itertools
CONF = {
    "default": [],
    "b16": ["--batch-size", "16"],
    "e4": ["--env-steps-per-update", "4"],
    "b64e4": ["--batch-size", "64", "--env-steps-per-update", "4"],
    "b96e6": ["--batch-size", "96", "--env-steps-per-update", "6"],
    "t10": ["--burn-in", "5", "--trace", "10", "--period", "5"],
    "b16t10": ["--batch-size", "16", "--burn-in", "5", "--trace", "10", "--period", "5"],
}
names = sys.argv[1].split(",") if len(sys.argv) > 1 else list(CONF)
seeds = [int(s) for s in sys.argv[2].split(",")] if len(sys.argv) > 2 else [0, 1, 2]
out = open("/work/runs/mc_sweep/results.jsonl", "a")
for seed, name in itertools.product(seeds, names):
    rd = f"/work/runs/mc_sweep/{name}-s{seed}"
    subprocess.run(["rm", "-rf", rd])
    t = time.perf_counter(); load = os.getloadavg()[0]
    p = subprocess.run([".venv/bin/python", "/work/scratch/phase_time.py", "train", "r2d3", "--env", "MountainCar-v0",
        "--demos", "demos/MountainCar-v0", "--seed", str(seed), "--run-dir", rd, "--no-progress", *CONF[name]],
        capture_output=True, text=True, env=dict(os.environ, SDL_VIDEODRIVER="dummy"), cwd="/work/main")
    wall = time.perf_counter() - t
    evals = [json.loads(l) for l in open(rd + "/metrics.jsonl") if '"eval"' in l]
    hit = next((e for e in evals if e["eval_return"] >= -120), None)
    lines = p.stderr.strip().splitlines()
    row = {"conf": name, "seed": seed, "wall": round(wall, 1), "load": round(load, 2),
           "hit_steps": hit and hit["env_steps"], "hit_updates": hit and hit.get("updates"),
           "evals": [(e["env_steps"], e["eval_return"]) for e in evals], "timing": lines[-2] if len(lines) > 1 else p.stderr[-500:]}
    print(json.dumps(row), file=out, flush=True); print(json.dumps(row)[:300], flush=True)

"""The comparisons of the learning-from-demonstration algorithms against their targets;
prints one JSON object per scenario (and the two targets when their scenario ran).

  python benchmarks/bench_compare.py mc1 [--seeds 3] [--budget 10000] [--jobs 2]
      MountainCar-v0 with ONE scripted demo (r2d2 r2d3 dqfd bc sqil), threshold -120.
      Target: DQfD reaches an evaluation mean >= -120 within 10,000 env steps.
  python benchmarks/bench_compare.py mc5 ...
      MountainCar-v0 with 5 scripted demos. Target: BC's final return >= 90% of the demos'
      mean return (for negative returns: no worse than demo mean / 0.9).
  python benchmarks/bench_compare.py cartpole ...
      CartPole-v1 with 2 scripted demos, threshold 475.

Results go to --work/<scenario> (default /tmp/demostudio-compare): results.md,
learning_curves.png and results.jsonl; a rerun skips finished runs.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

DEMOS = Path(__file__).resolve().parent.parent / "demos"
SCENARIOS = {
    "mc1": ("MountainCar-v0", "one", -120.0),
    "mc5": ("MountainCar-v0", "all", -120.0),
    "cartpole": ("CartPole-v1", "all", 475.0),
}


def scenario_demos(env: str, which: str) -> Path:
    folder = DEMOS / env
    return sorted(folder.glob("*.h5"))[0] if which == "one" else folder


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("scenario", choices=sorted(SCENARIOS))
    ap.add_argument("--algos", nargs="+", default=["r2d2", "r2d3", "dqfd", "bc", "sqil"])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--budget", type=int, default=10_000)
    ap.add_argument("--eval-every", type=int, default=1_000)
    ap.add_argument("--eval-episodes", type=int, default=5)
    ap.add_argument("--final-eval-episodes", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--overrides", default="{}")
    ap.add_argument("--work", type=Path, default=Path("/tmp/demostudio-compare"))
    args = ap.parse_args()

    from agents.compare import demo_info, run_comparison
    from demostudio.cli.compare_cmd import CompareConfig

    env, which, threshold = SCENARIOS[args.scenario]
    demos = scenario_demos(env, which)
    cfg = CompareConfig(
        env=env,
        demos=(demos,),
        algos=tuple(args.algos),
        seeds=args.seeds,
        budget=args.budget,
        out=args.work / args.scenario,
        threshold=threshold,
        eval_every=args.eval_every,
        eval_episodes=args.eval_episodes,
        final_eval_episodes=args.final_eval_episodes,
        jobs=args.jobs,
        overrides=args.overrides,
    )
    summaries, table, png = run_comparison(cfg, report=lambda line: print(line, flush=True))
    info = demo_info(cfg.demos)
    out: dict = {
        "scenario": args.scenario,
        "env": env,
        "demo_episodes": len(info.paths),
        "demo_mean_return": info.mean_return,
        "budget": args.budget,
        "threshold": threshold,
        "table": str(table),
        "curves": str(png),
        "algos": {},
    }
    for algo in args.algos:
        rows = [r for r in summaries if r.algo == algo]
        if not rows:
            continue
        hits = [r.steps_to_threshold for r in rows if r.steps_to_threshold is not None]
        out["algos"][algo] = {
            "seeds": len(rows),
            "final_return_mean": float(np.mean([r.final_return for r in rows])),
            "final_return_std": float(np.std([r.final_return for r in rows])),
            "best_eval_return_mean": float(np.mean([max(v for _, v in r.curve) for r in rows])),
            "reached": f"{len(hits)}/{len(rows)}",
            "steps_to_threshold_median": float(np.median(hits)) if hits else None,
            "wall_s_mean": float(np.mean([r.wall_s for r in rows])),
        }
    if args.scenario == "mc1" and "dqfd" in out["algos"]:
        dq = [r for r in summaries if r.algo == "dqfd"]
        ok = [r.steps_to_threshold is not None and r.steps_to_threshold <= 10_000 for r in dq]
        out["target_dqfd_1demo_-120_within_10000"] = f"{sum(ok)}/{len(ok)} seeds"
    if args.scenario == "mc5" and "bc" in out["algos"]:
        bc = out["algos"]["bc"]["final_return_mean"]
        demo = info.mean_return
        ratio = demo / bc if demo < 0 else bc / demo  # >= 0.9 passes either way
        out["target_bc_5demos_90pct"] = {"bc": bc, "demos": demo, "ratio": ratio,
                                         "passed": bool(ratio >= 0.9)}  # fmt: skip
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()

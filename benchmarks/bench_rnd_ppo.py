"""RND-PPO against PPO at the same budget on sparse-reward tasks, with and without the
shipped demos, and a Montezuma's Revenge smoke run; prints one JSON object.

  python benchmarks/bench_rnd_ppo.py sparse [--budget 100000] [--seeds 3] [--seed-stride 100]
                                            [--jobs 2]
                                            [--envs ...] [--variants ...] [--set KEY=VALUE ...]
      MountainCar-v0 and MiniGrid-DoorKey-8x8-v0 (and -5x5, by --envs): ppo, rnd-ppo,
      ppo+demos, rnd-ppo+demos; --set overrides a config field of every run (JSON values)
      (demos: demos/<env>/, BC pre-training first). Per variant, the median over seeds of
      the env step of the first successful TRAINING episode (MountainCar: the car reached
      the flag before the 200-step limit; MiniGrid: the door opened and the goal reached,
      return > 0), the first evaluation with a success, and the last evaluation's success
      rate and mean return.
  python benchmarks/bench_rnd_ppo.py montezuma [--budget 20000]
      ALE/MontezumaRevenge-v5 on the CPU with the paper's settings (84x84 grey, 4 stacked
      frames, sticky actions 0.25): intrinsic reward per rollout and the rooms visited.
  python benchmarks/bench_rnd_ppo.py table --tables WORK [WORK ...]
      Finished sparse --work folders side by side (e.g. one per --set value): per group
      and seed the evaluation series and the summary, and the medians over seeds.

Every run's summary is appended to --work/results.jsonl as it finishes (a rerun skips
finished runs), so an interrupted benchmark keeps what it measured.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import time
from pathlib import Path
from typing import Any

import numpy as np

DEMOS = Path(__file__).resolve().parent.parent / "demos"
TASKS: dict[str, dict[str, Any]] = {
    # MountainCar: the policy input standardised by random steps (the velocity a random
    # policy gives is +-0.07 of the bounds otherwise), the -1 per step scaled to -0.01
    # (returns of -100 regressed through the shared torso swamp the policy's features), and
    # the predictor at RL-RND's 1e-4 (at 1e-3 it learns the 2-D state within 5k steps,
    # and the novelty is gone before the policy has learned to swing)
    "MountainCar-v0": dict(
        rnn_layers=0, hidden=64, lstm=64, num_envs=8, rollout_length=128, segment_length=32,
        gamma_ext=0.99, lr_policy=1e-3, lr_value=1e-3, lr_predictor=1e-4, ent_coef=0.01,
        clip_range=0.2, max_grad_norm=0.5, policy_obs_norm_steps=1024, ext_reward_scale=0.01,
    ),
    "MiniGrid-DoorKey-5x5-v0": dict(
        rnn_layers=1, hidden=64, lstm=64, num_envs=8, rollout_length=128, segment_length=32,
        gamma_ext=0.99, lr_policy=1e-3, lr_value=1e-3, lr_predictor=1e-3, ent_coef=0.01,
        clip_range=0.2, max_grad_norm=0.5,
    ),
    # DoorKey-8x8: int_coef 0.25 (not 1) against ext_coef 2 keeps the demos' solution once
    # the BC loss is gone: reaching the goal ends the intrinsic return's run through the goal
    # room and restarts it at familiar start states (non-episodic), which at int_coef 1 costs
    # more than the goal pays (3 seeds each, results/rnd-ppo-doorkey-8x8/int-coef.json). The
    # advantage is normalised per minibatch, so before the first extrinsic reward the scale
    # of int_coef changes nothing. The BC loss on demo segments (with --demos; nothing to act
    # on without) weighs 1 and anneals to 0 over 50k env steps.
    "MiniGrid-DoorKey-8x8-v0": dict(
        rnn_layers=1, hidden=64, lstm=64, num_envs=8, rollout_length=128, segment_length=32,
        gamma_ext=0.99, lr_policy=1e-3, lr_value=1e-3, lr_predictor=1e-3, ent_coef=0.01,
        clip_range=0.2, max_grad_norm=0.5, int_coef=0.25, bc_coef=1.0, bc_anneal_steps=50_000,
    ),
}  # fmt: skip
VARIANTS = {"ppo": ("ppo", False), "rnd-ppo": ("rnd-ppo", False),
            "ppo+demos": ("ppo", True), "rnd-ppo+demos": ("rnd-ppo", True)}  # fmt: skip


def succeeded(env: str, length: int, total_return: float) -> bool:
    if env.startswith("MountainCar"):
        return length < 200
    return total_return > 0


def eval_success(env: str, row: dict) -> float:
    if env.startswith("MountainCar"):
        return float(row["eval_length"] < 200)  # the mean length: some episode got there
    return float(row["eval_success"])


def doorkey_progress(image: np.ndarray, mask: np.ndarray) -> tuple[int, int]:
    """MiniGrid views ``[..., W, H, 3]`` (x, y, channel: object, colour, state) and their
    ``mask`` ``[...]`` -> (steps where the agent carries the key, steps with an open door in
    view). The agent sits at x = W // 2, y = H - 1 of its view, and that cell shows what it
    carries (MiniGrid's ``gen_obs``)."""
    from minigrid.core.constants import OBJECT_TO_IDX, STATE_TO_IDX

    img = image[mask]  # [N, W, H, 3]
    w, h = img.shape[1:3]
    key = img[:, w // 2, h - 1, 0] == OBJECT_TO_IDX["key"]
    door = (img[..., 0] == OBJECT_TO_IDX["door"]) & (img[..., 2] == STATE_TO_IDX["open"])
    return int(key.sum()), int(door.any(axis=(1, 2)).sum())


def run_dir_of(work: Path, env: str, variant: str, seed: int, overrides: str) -> Path:
    """Where ``sparse`` trains one run (the --set overrides, as a canonical JSON object, are
    part of the name)."""
    tag = "".join(c if c.isalnum() or c in "._=-" else "_" for c in overrides.replace(" ", ""))
    return work / f"{env.replace('/', '-')}-{variant}-s{seed}{'-' + tag if tag else ''}"


def run_one(job: tuple[str, str, int, int, Path, str]) -> dict[str, Any]:
    import torch

    from agents.core.run import train
    from agents.rnd_ppo import PPO, RNDPPO, PPOConfig, RNDPPOConfig

    env, variant, seed, budget, work, overrides = job
    algo, with_demos = VARIANTS[variant]
    torch.set_num_threads(1)
    base = RNDPPO if algo == "rnd-ppo" else PPO
    first: dict[str, int] = {}
    reach = {"max_position": -np.inf}  # MountainCar: how far right the car got (exploration)
    # MiniGrid DoorKey, training steps: [steps, carrying the key, open door in view] per
    # tenth of the budget, and the env step of the first rollout with each
    bins = np.zeros((10, 3), dtype=np.int64)
    first_seen: dict[str, int] = {}

    class Watched(base):  # the first successful training episode
        def on_rollout(self, ctx, batch):
            if env.startswith("MountainCar"):
                pos = batch.obs["obs"][..., 0][batch.mask]
                reach["max_position"] = max(reach["max_position"], float(pos.max(initial=-9)))
            elif "DoorKey" in env:
                mask = batch.mask[:, :-1]  # the last position is the next rollout's first
                key, door = doorkey_progress(batch.obs["image"][:, :-1], mask)
                step = ctx.counters.env_steps
                bins[min(9, step * 10 // budget)] += (int(mask.sum()), key, door)
                for name, n in (("key", key), ("door_open", door)):
                    if n and name not in first_seen:
                        first_seen[name] = step
            return super().on_rollout(ctx, batch)

        def on_episode(self, ctx, episode):
            super().on_episode(ctx, episode)
            if "step" not in first and succeeded(env, episode.length, episode.total_return):
                first["step"] = ctx.counters.env_steps

    cls = RNDPPOConfig if algo == "rnd-ppo" else PPOConfig
    run_dir = run_dir_of(work, env, variant, seed, overrides)
    cfg = cls(env=env, seed=seed, run_dir=run_dir, total_env_steps=budget, resume=False,
              eval_every=max(budget // 10, 1), eval_episodes=5, progress=False,
              tensorboard=False, checkpoint_every=budget, keep_checkpoints=1,
              demos=(DEMOS / env,) if with_demos else (), bc_pretrain_updates=300,
              **{**TASKS[env], **json.loads(overrides or "{}")})  # fmt: skip
    t0 = time.perf_counter()
    result = train(Watched(cfg))
    rows = [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines()]
    evals = [r for r in rows if r["kind"] == "eval" and r["env_steps"] > 0]
    ok = [r["env_steps"] for r in evals if eval_success(env, r) > 0]
    intr = [r["intrinsic_reward"] for r in rows if "intrinsic_reward" in r]
    return {
        "env": env, "variant": variant, "seed": seed, "budget": budget, "set": overrides,
        "env_steps": result.env_steps, "wall_s": round(time.perf_counter() - t0, 1),
        "first_success_train_step": first.get("step"),
        "first_success_eval_step": ok[0] if ok else None,
        "final_success": eval_success(env, evals[-1]) if evals else None,
        "final_return": evals[-1]["eval_return"] if evals else None,
        "mean_intrinsic_reward": float(np.mean(intr)) if intr else None,
        "max_position": reach["max_position"] if env.startswith("MountainCar") else None,
        **({} if "DoorKey" not in env else {
            "first_key_step": first_seen.get("key"),
            "first_door_open_step": first_seen.get("door_open"),
            "key_share_per_tenth": [round(k / n, 4) if n else None for n, k, _ in bins],
            "door_open_share_per_tenth": [round(d / n, 4) if n else None for n, _, d in bins],
        }),
    }  # fmt: skip


def median(xs: list, budget: int) -> float | None:
    """Median with 'never' counted as past the budget (None when most runs never did)."""
    vals = [budget * 10 if x is None else x for x in xs]
    m = float(np.median(vals)) if vals else None
    return None if m is None or m >= budget * 10 else m


def median_of(xs: list) -> float | None:
    """Median of the values given (None: none given)."""
    vals = [x for x in xs if x is not None]
    return float(np.median(vals)) if vals else None


def sparse(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    out = work / "results.jsonl"
    done = {}
    if out.exists():
        for line in out.read_text().splitlines():
            r = json.loads(line)
            done[(r["env"], r["variant"], r["seed"], r["budget"], r.get("set", ""))] = r
    sets = overrides(args.set)
    seeds = [k * args.seed_stride for k in range(args.seeds)]
    jobs = [(env, v, s, args.budget, work, sets) for env in args.envs for v in args.variants
            for s in seeds if (env, v, s, args.budget, sets) not in done]  # fmt: skip
    with mp.get_context("spawn").Pool(args.jobs) as pool:
        for r in pool.imap_unordered(run_one, jobs):
            done[(r["env"], r["variant"], r["seed"], r["budget"], r["set"])] = r
            with out.open("a") as f:
                f.write(json.dumps(r) + "\n")
    table: dict[str, Any] = {}
    for env in args.envs:
        for v in args.variants:
            same = (env, v, args.budget, sets)
            runs = [r for k, r in done.items()
                    if (k[0], k[1], k[3], k[4]) == same and k[2] in seeds]  # fmt: skip
            if not runs:
                continue
            table[f"{env} {v}"] = {
                "seeds": len(runs),
                "median_first_success_train_step": median(
                    [r["first_success_train_step"] for r in runs], args.budget),
                "median_first_success_eval_step": median(
                    [r["first_success_eval_step"] for r in runs], args.budget),
                "median_final_success": float(np.median([r["final_success"] or 0 for r in runs])),
                "median_final_return": float(np.median([r["final_return"] for r in runs])),
                "median_max_position": median_of([r.get("max_position") for r in runs]),
                "runs": runs,
            }  # fmt: skip
    return {"benchmark": "rnd_ppo_sparse", "budget": args.budget, "set": sets, "results": table}


def table(args: argparse.Namespace) -> dict[str, Any]:
    """Finished ``sparse`` work folders side by side: per (env, variant, --set) group and
    seed, the evaluation series from the run's metrics.jsonl (step 0: after the BC
    pre-training), the mean success of the evaluations past half the budget, and the summary
    line; then the medians over seeds."""
    groups: dict[str, Any] = {}
    for work in map(Path, args.tables):
        for line in (work / "results.jsonl").read_text().splitlines():
            r = json.loads(line)
            run_dir = run_dir_of(work, r["env"], r["variant"], r["seed"], r.get("set", ""))
            rows = [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines()]
            evals = [(e["env_steps"], eval_success(r["env"], e), round(e["eval_return"], 4))
                     for e in rows if e["kind"] == "eval"]  # fmt: skip
            name = f"{r['env']} {r['variant']} budget={r['budget']} set={r.get('set', '')}"
            group = groups.setdefault(name, {"runs": []})
            late = [ok for step, ok, _ in evals if step > r["budget"] // 2]
            group["runs"].append({**r, "work": str(work), "evals": evals,
                                  "mean_success_second_half": round(float(np.mean(late)), 4)
                                  if late else None})  # fmt: skip
    for group in groups.values():
        runs = sorted(group["runs"], key=lambda r: r["seed"])
        budget = runs[0]["budget"]
        group.update(
            seeds=[r["seed"] for r in runs],
            median_first_success_train_step=median(
                [r["first_success_train_step"] for r in runs], budget),
            median_first_success_eval_step=median(
                [r["first_success_eval_step"] for r in runs], budget),
            median_final_success=float(np.median([r["final_success"] or 0 for r in runs])),
            median_final_return=float(np.median([r["final_return"] for r in runs])),
            median_success_second_half=median_of(
                [r["mean_success_second_half"] for r in runs]),
            runs=runs,
        )  # fmt: skip
    return {"benchmark": "rnd_ppo_sparse_table", "groups": groups}


def overrides(pairs: list[str]) -> str:
    """``["int_coef=4", "rnn_layers=0"]`` -> a canonical JSON object of config fields."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise SystemExit(f"--set: expected KEY=VALUE, got {pair!r}")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return json.dumps(out, sort_keys=True) if out else ""


def montezuma(args: argparse.Namespace) -> dict[str, Any]:
    import gymnasium as gym
    import torch

    from agents.core.run import train
    from agents.rnd_ppo import RNDPPO, RNDPPOConfig

    torch.set_num_threads(max(1, args.jobs))
    rooms: set[int] = set()

    class RoomLog(gym.Wrapper):
        def step(self, action):
            out = super().step(action)
            rooms.add(int(out[-1].get("room", -1)))
            return out

    class Smoke(RNDPPO):
        def make_env(self, render_mode=None):
            return RoomLog(super().make_env(render_mode))

    run_dir = Path(args.work) / "montezuma"
    cfg = RNDPPOConfig(env="ALE/MontezumaRevenge-v5", seed=0, run_dir=run_dir, resume=False,
                       total_env_steps=args.budget, num_envs=8, rollout_length=128,
                       segment_length=32, hidden=256, lstm=256, eval_every=0,
                       progress=False, tensorboard=False, obs_norm_init_steps=64,
                       checkpoint_every=args.budget)  # fmt: skip
    t0 = time.perf_counter()
    result = train(Smoke(cfg))
    rows = [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines()]
    train_rows = [r for r in rows if r["kind"] == "train"]
    return {
        "benchmark": "rnd_ppo_montezuma_smoke", "env_steps": result.env_steps,
        "wall_s": round(time.perf_counter() - t0, 1),
        "intrinsic_reward_per_rollout": [round(r["intrinsic_reward"], 4) for r in train_rows],
        "intrinsic_raw_per_rollout": [round(r["intrinsic_raw"], 4) for r in train_rows],
        "episode_return": [r.get("episode_return") for r in train_rows],
        "rooms_visited": sorted(r for r in rooms if r >= 0),
    }  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("what", choices=["sparse", "montezuma", "table"])
    ap.add_argument("--budget", type=int, default=100_000, help="env steps per run")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument(
        "--seed-stride",
        type=int,
        default=100,
        help="run seeds 0, x, 2x, ...: the core resets env i of a run with seed + i, so seeds "
        "closer than --num-envs apart share most env streams (DoorKey layouts)",
    )
    ap.add_argument("--jobs", type=int, default=2, help="runs in parallel")
    ap.add_argument("--envs", nargs="+", default=list(TASKS), choices=list(TASKS))
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    ap.add_argument(
        "--set",
        nargs="*",
        default=[],
        metavar="KEY=VALUE",
        help="override a config field of every run (value as JSON)",
    )
    ap.add_argument("--work", default="/tmp/demostudio-bench-rnd-ppo")
    ap.add_argument(
        "--tables",
        nargs="+",
        default=[],
        metavar="WORK",
        help="table: the finished sparse --work folders to put side by side",
    )
    args = ap.parse_args()
    if args.what == "table" and not args.tables:
        raise SystemExit("table: expected --tables WORK [WORK ...], got none")
    result = {"sparse": sparse, "montezuma": montezuma, "table": table}[args.what](args)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()

"""Reactor benchmarks; each prints one JSON object (median over seeds).

  python benchmarks/bench_reactor.py cartpole [--seeds 0 1 2] [--budget 50000]
      CartPole-v1 at the default config: env steps and wall time to the first evaluation
      mean >= 475, and whether every later evaluation stays >= 475 to the end of the budget
      (target: <= 40,000 env steps, stable).
  python benchmarks/bench_reactor.py ablation [--seeds ...] [--variants ...]
      CartPole-v1: full Reactor vs without the distributional critic, TIS instead of
      beta-LOO, with the trust region, and with the network symmetric under CartPole's
      reflection (``mirror``: --mirror env): env steps to 475 and final evaluation return.
  python benchmarks/bench_reactor.py mountaincar [--seeds ...] [--budget 50000] [--variants ...]
      MountainCar-v0 with the one shipped demo (the first file of demos/MountainCar-v0)
      vs without (variants one_demo, no_demos): env steps to an evaluation mean >= -120.
  python benchmarks/bench_reactor.py lunarlander [--seeds ...] [--budget 600000]
      LunarLander-v3: env steps and wall time to an evaluation mean >= 200 over 10
      episodes (every 25k env steps; the run stops once the mean of the last 3
      evaluations reaches 200), with the learning rate annealed over 500k env steps
      instead of CartPole's 40k.
  python benchmarks/bench_reactor.py targets [--repeat 200]
      Micro-benchmark of the distributional Retrace target alone (batch 32, 2 actions,
      51 atoms, rows 21 = a trace after the burn-in and 31 = a whole sequence), one thread:
      CPU milliseconds per call, median of --repeat.
  python benchmarks/bench_reactor.py failures RUN_DIR [--episodes 20] [--horizon 1]
      [--epsilon 0]
      CartPole-v1: every checkpoint of a run (train with --set checkpoint_every=2500
      keep_checkpoints=20; a gated run's checkpoints play their deployed network) played
      greedily (--epsilon: random actions that often) from the same --episodes reset seeds,
      each to --horizon times the 500-step limit (a cart that drifts slowly runs off the
      track only past it: agents/core/gate.py): mean
      length, and of the episodes that ended before the step limit, how many ran the cart
      off the track (|x| > 2.4) and how many let the pole fall, with their lengths and the
      cart's distance from the centre when they ended; and over every step the pole's mean
      angle (a policy that balances it leaning drives the cart one way) and the cart's mean
      distance from the centre (a policy that plays 500 with the cart parked near the edge
      is one small change from running it off); and where each episode took the cart: the
      signed mean of its position over the episode's second half (``cart_settles``, one
      per episode, in reset-seed order) and how many of them lie left and right of the
      centre. A policy with a learned offset takes the cart the same way from every start.
      And the restoring map (``from_rest``): one greedy episode from rest at each of nine
      cart positions from -1.6 to 1.6, where it settles and its length (a policy that
      controls the cart's position settles each start nearer the centre than it began),
      with the critic's value 25, 50 and 100 steps before an episode's end beside the
      true discounted value (does the critic see the edge coming).
  python benchmarks/bench_reactor.py merge OUT.json OUT.json ...
      The outputs of runs made side by side (say one seed each), merged into one JSON with
      the medians over all their seeds.

The learner runs on the CPU unless ``--set device='"cuda"'`` (the actors always do).
Runs go to --work (default /tmp/demostudio-bench-reactor). Run with ``nice`` on a shared
machine; every run is single-threaded (--torch-threads 1), and reports the process's CPU
seconds beside the wall time (on a shared machine the wall time is mostly waiting).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import statistics
import sys
import time
from pathlib import Path

import gymnasium as gym

ROOT = Path(__file__).resolve().parents[1]
SHIPPED_MC_DEMO = sorted((ROOT / "demos" / "MountainCar-v0").glob("*.h5"))[:1]

CARTPOLE = dict(env="CartPole-v1", eval_every=2_500, eval_episodes=5)
MOUNTAINCAR = dict(env="MountainCar-v0", eval_every=2_500, eval_episodes=5)
LUNARLANDER = dict(env="LunarLander-v3", eval_every=25_000, eval_episodes=10,
                   learning_rate_steps=500_000, stop_return=200.0, stop_evals=3)  # fmt: skip
VARIANTS = {
    "full": {},
    "expected_critic": dict(distributional=False),
    "tis": dict(policy_gradient="tis"),
    "trust_region": dict(trust_region=True),
    "mirror": dict(mirror="env"),
}
MC_VARIANTS = {
    "one_demo": dict(demos=tuple(SHIPPED_MC_DEMO)),
    "no_demos": {},
}


def learning_run(seed: int, work: Path, target: float, **overrides) -> dict:
    """One Reactor run; evaluations carry the wall time since the run began."""
    from agents.core.logger import read_metrics
    from agents.core.run import train
    from agents.reactor import Reactor, ReactorConfig

    class Timed(Reactor):
        def start(self, ctx):
            super().start(ctx)
            self.t0 = time.perf_counter()
            self.c0 = time.process_time()

        def eval_metrics(self, ctx):
            return {
                "wall_s": time.perf_counter() - self.t0,
                "cpu_s": time.process_time() - self.c0,
            }

    run = work / "runs" / f"reactor-{overrides['env']}-s{seed}-{time.time_ns()}"
    cfg = ReactorConfig(seed=seed, run_dir=run, progress=False, tensorboard=False,
                        **{"device": "cpu", "stop_when": "off", **overrides})  # fmt: skip
    t = time.perf_counter()
    res = train(Timed(cfg))
    evals = [r for r in read_metrics(run) if r["kind"] == "eval"]
    hit = next((i for i, r in enumerate(evals) if r["eval_return"] >= target), None)
    return {
        "seed": seed,
        "env_steps_to_target": None if hit is None else evals[hit]["env_steps"],
        "wall_s_to_target": None if hit is None else round(evals[hit]["wall_s"], 1),
        "cpu_s_to_target": None if hit is None else round(evals[hit]["cpu_s"], 1),
        "stays_above_target": None
        if hit is None
        else all(r["eval_return"] >= target for r in evals[hit:]),
        "evals_after_target_above": None
        if hit is None
        else f"{sum(r['eval_return'] >= target for r in evals[hit:])}/{len(evals) - hit}",
        "final_eval_return": evals[-1]["eval_return"] if evals else None,
        "curve": [(r["env_steps"], round(r["eval_return"], 1)) for r in evals],
        "env_steps": res.env_steps,
        "updates": res.updates,
        "wall_s": round(time.perf_counter() - t, 1),
    }


def summarize(runs: list[dict], budget: int, target: float) -> dict:
    steps = [r["env_steps_to_target"] or float("inf") for r in runs]
    med = statistics.median(steps)
    wall = statistics.median(r["wall_s_to_target"] or float("inf") for r in runs)
    cpu = statistics.median(r.get("cpu_s_to_target") or float("inf") for r in runs)
    return {
        "target": target,
        "budget": budget,
        "median_env_steps_to_target": None if med == float("inf") else med,
        "median_wall_s_to_target": None if wall == float("inf") else wall,
        "median_cpu_s_to_target": None if cpu == float("inf") else cpu,
        "reached": sum(s != float("inf") for s in steps),
        "stable": sum(bool(r["stays_above_target"]) for r in runs),
        "of": len(runs),
        "median_final_eval_return": statistics.median(r["final_eval_return"] for r in runs),
        "runs": runs,
    }


def merge(paths: list[str]) -> dict:
    """One JSON from several outputs of this script (e.g. one seed per process, run side by
    side): the runs of each variant together, summarized again."""
    outs = [json.loads(Path(p).read_text()) for p in paths]
    merged: dict = {"benchmark": outs[0]["benchmark"], "merged": paths}
    for out in outs:
        for name, res in out.items():
            if isinstance(res, dict) and "runs" in res:
                merged.setdefault(name, {"budget": res["budget"], "target": res["target"],
                                         "runs": []})["runs"] += res["runs"]  # fmt: skip
    for name, res in merged.items():
        if isinstance(res, dict) and "runs" in res:
            merged[name] = summarize(res["runs"], res["budget"], res["target"])
    return merged


def time_targets(repeat: int) -> dict:
    """CPU milliseconds per ``distributional_retrace_targets`` call at the learner's shapes."""
    import torch

    from agents.reactor.distributional import distributional_retrace_targets

    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(0)
    out: dict = {"benchmark": "reactor-targets", "batch": 32, "actions": 2, "atoms": 51}
    for rows in (21, 31):
        shape = (rows, 32)
        args = (
            torch.rand(shape, generator=gen),  # reward
            torch.zeros(shape),  # terminal
            torch.ones(shape, dtype=torch.bool),  # mask
            torch.randint(0, 2, shape, generator=gen),  # action
            torch.softmax(torch.randn(*shape, 2, 51, generator=gen), -1),  # target probs
            torch.softmax(torch.randn(*shape, 2, generator=gen), -1),  # pi
            torch.rand(shape, generator=gen),  # traces
        )
        times = []
        for _ in range(repeat):
            t = time.process_time()  # CPU time: robust to other processes on the machine
            distributional_retrace_targets(*args, 0.99, -9.94, 109.28)
            times.append(time.process_time() - t)
        out[f"cpu_ms_per_call_rows_{rows}"] = round(1e3 * statistics.median(times), 3)
    return out


class CartPoleProbe(gym.Wrapper):
    """CartPole as it is, recording the pole's angle and the cart's distance from the centre
    every step; for each episode that terminates, its length and that distance; and for
    every episode, the signed mean cart position over its second half (where it settles)."""

    def __init__(self, env: gym.Env):
        super().__init__(env)
        self.angles: list[float] = []
        self.distances: list[float] = []
        self.ended: list[tuple[int, float]] = []
        self.settles: list[float] = []
        self.steps = 0
        self._xs: list[float] = []

    def reset(self, **kwargs):
        self.steps = 0
        self._xs = []
        return self.env.reset(**kwargs)

    def step(self, action):
        out = self.env.step(action)
        x, _, angle, _ = (float(v) for v in self.env.unwrapped.state)
        self.angles.append(angle)
        self.distances.append(abs(x))
        self._xs.append(x)
        self.steps += 1
        if out[2]:  # terminated
            self.ended.append((self.steps, abs(x)))
        if out[2] or out[3]:
            self.settles.append(statistics.mean(self._xs[len(self._xs) // 2 :]))
        return out


REST_STARTS = (-1.6, -1.2, -0.8, -0.4, 0.0, 0.4, 0.8, 1.2, 1.6)
"""Cart positions the restoring map starts from, at rest (pole upright, no velocity)."""
BEFORE_END = (25, 50, 100)
"""Steps before an episode's end at which the critic's value is compared with the truth."""


def watch_critic(controller, config: dict) -> list[float]:
    """Record, at every step the controller plays, the critic's state value
    ``V(x) = sum_a pi(a|x) Q(x, a)`` (``Q`` the mean of the distributional critic's atoms, or
    the expected critic itself); returns the list the values are appended to."""
    import torch

    from agents.reactor.distributional import atoms
    from agents.reactor.learning import CRITIC, POLICY

    values: list[float] = []
    policy = controller.policy
    select = policy.selector
    if config["distributional"]:
        z = atoms(config["num_atoms"], config["v_min"], config["v_max"])

    def recording(out, rng):
        pi = torch.softmax(out.heads[POLICY][-1, 0].float(), -1)
        q = out.heads[CRITIC][-1, 0].float()
        if config["distributional"]:
            q = (torch.softmax(q, -1) * z).sum(-1)
        values.append(float((pi * q).sum()))
        return select(out, rng)

    policy.selector = recording
    return values


def from_rest(env: CartPoleProbe, controller, config: dict, starts=REST_STARTS) -> list[dict]:
    """The restoring map: one greedy episode from rest at each cart position of ``starts``:
    ``start``, where the cart settles (``settles``) and the episode's ``length``. A policy
    that controls the cart's position brings every start towards the centre (settles
    between the start and 0); one that only balances the pole leaves the cart where it
    starts or lets it drift outwards (an unstable centre), and the far starts run off the
    track. And whether the critic sees the end coming: for an episode that ran off or fell,
    ``value_before_end`` gives, ``k`` steps before its end, ``[the critic's V, the true
    discounted value (1 - g^k) / (1 - g)]``; for one that reached the step limit,
    ``value_at_start`` gives ``[V, 1 / (1 - g)]`` (the limit is a truncation: the critic
    bootstraps through it). A critic that never saw the cart leave the track values a
    state 25 steps from the edge like the centre."""
    import numpy as np

    values = watch_critic(controller, config)
    g = config["discount"]
    out = []
    for start in starts:
        obs, info = env.reset(seed=0)
        env.unwrapped.state = np.array([start, 0.0, 0.0, 0.0])
        obs = np.asarray(env.unwrapped.state, dtype=np.float32)
        controller.reset(env, obs, info)
        values.clear()
        ended, done = len(env.ended), False
        while not done:
            obs, _, terminated, truncated, _ = env.step(controller.act(env, obs))
            done = terminated or truncated
        n = len(values)
        row = {"start": start, "settles": round(env.settles[-1], 2), "length": n}
        if len(env.ended) > ended:
            row["value_before_end"] = {
                k: [round(values[n - k], 1), round((1 - g**k) / (1 - g), 1)]
                for k in BEFORE_END
                if k <= n
            }
        else:
            row["value_at_start"] = [round(values[0], 1), round(1 / (1 - g), 1)]
        out.append(row)
    return out


def reactor_run_config(run: Path) -> dict:
    """The run's config.json; a ValueError naming its ``algo`` field unless it is a Reactor
    run's (missing, unreadable or another algorithm's)."""
    path = run / "config.json"
    try:
        config = json.loads(path.read_text())
        algo = config.get("algo")
    except (OSError, ValueError, AttributeError):
        algo = None
    if algo != "reactor":
        raise ValueError(f"{path}: algo: expected a Reactor run, got {algo!r}")
    return config


def checkpoint_failures(run: Path, episodes: int, horizon: float = 1.0,
                        epsilon: float = 0.0) -> dict:  # fmt: skip
    """Why the greedy episodes of each checkpoint of a CartPole run ended (see the module
    docstring); checkpoints in env-step order, ``final.pt`` last."""
    from agents.core.evaluate import run_episodes
    from agents.core.gate import lengthen
    from agents.core.restore import restore_agent

    config = reactor_run_config(run)
    rows = []
    folder = run / "checkpoints"
    for path in [*sorted(folder.glob("step-*.pt")), folder / "final.pt"]:
        if not path.is_file():
            continue
        agent = restore_agent(path, epsilon=epsilon, seed=0)
        env = CartPoleProbe(agent.make_env())
        steps = lengthen(env, horizon)
        limit = env.unwrapped.x_threshold  # past it the cart is off the track (2.4)
        result = run_episodes(env, agent.controller, episodes, seed=10_000)
        row = {
            "checkpoint": path.name,
            "env_steps": agent.counters.get("env_steps"),
            "step_limit": steps,
            "mean_length": statistics.mean(result.lengths),
            "off_track": sum(x > limit for _, x in env.ended),
            "pole_fell": sum(x <= limit for _, x in env.ended),
            "failed_lengths": sorted(n for n, _ in env.ended),
            "failed_cart_distance": sorted(x for _, x in env.ended),
            "mean_pole_angle_deg": round(math.degrees(statistics.mean(env.angles)), 3),
            "mean_cart_distance": round(statistics.mean(env.distances), 3),
            "cart_settles": [round(x, 2) for x in env.settles],
            "settles_left_right": [sum(x < 0 for x in env.settles),
                                   sum(x > 0 for x in env.settles)],
        }  # fmt: skip
        rows.append({**row, "from_rest": from_rest(env, agent.controller, config)})
        env.close()
    return {"benchmark": "reactor-cartpole-failures", "run": str(run), "episodes": episodes,
            "horizon": horizon, "epsilon": epsilon, "checkpoints": rows}  # fmt: skip


def parse_overrides(p: argparse.ArgumentParser, items: list[str]) -> dict:
    """``FIELD=JSON`` items as config overrides; a bad one ends the run with one line."""
    from agents.reactor import ReactorConfig

    fields = {f.name for f in dataclasses.fields(ReactorConfig)}
    out = {}
    for kv in items:
        field, eq, value = kv.partition("=")
        if not eq or field not in fields:
            p.error(f"--set {kv}: expected FIELD=JSON with FIELD a ReactorConfig field")
        try:
            out[field] = json.loads(value)
        except json.JSONDecodeError:
            p.error(f"--set {kv}: expected FIELD=JSON (strings in quotes), got {value!r}")
    try:
        ReactorConfig(**{"env": "CartPole-v1", **out}).validate()
    except (TypeError, ValueError) as exc:
        p.error(f"--set: {exc}")
    return out


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["failures"]:
        f = argparse.ArgumentParser(prog="bench_reactor.py failures")
        f.add_argument("run", type=Path)
        f.add_argument("--episodes", type=int, default=20)
        f.add_argument("--horizon", type=float, default=1.0,
                       help="episodes play to this many times the env's step limit")  # fmt: skip
        f.add_argument("--epsilon", type=float, default=0.0,
                       help="a random action with this probability")  # fmt: skip
        fa = f.parse_args(argv[1:])
        if not list((fa.run / "checkpoints").glob("*.pt")):
            f.error(f"{fa.run}: expected a run folder with checkpoints/*.pt, found none")
        if fa.horizon < 1 or not 0 <= fa.epsilon <= 1:
            f.error(f"--horizon {fa.horizon} --epsilon {fa.epsilon}: expected a horizon >= 1 "
                    "and an epsilon in [0, 1]")  # fmt: skip
        try:
            out = checkpoint_failures(fa.run, fa.episodes, fa.horizon, fa.epsilon)
        except ValueError as exc:  # not a Reactor run, or a checkpoint it cannot use
            f.error(str(exc))
        json.dump(out, sys.stdout, indent=2)
        print()
        return 0
    if argv[:1] == ["targets"]:
        repeat = int(argv[2]) if argv[1:2] == ["--repeat"] else 200
        json.dump(time_targets(repeat), sys.stdout, indent=2)
        print()
        return 0
    if argv[:1] == ["merge"]:
        json.dump(merge(argv[1:]), sys.stdout, indent=2)
        print()
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("which", choices=["cartpole", "ablation", "mountaincar", "lunarlander"])
    p.add_argument("--seeds", type=int, nargs="*", default=[0, 1, 2])
    p.add_argument("--budget", type=int, default=None, help="env steps per learning run")
    p.add_argument("--variants", nargs="*", default=None, choices=[*VARIANTS, *MC_VARIANTS],
                   help="ablation: full expected_critic tis trust_region mirror (default all); "
                   "mountaincar: one_demo no_demos (default both)")  # fmt: skip
    p.add_argument("--work", default="/tmp/demostudio-bench-reactor")
    p.add_argument("--set", nargs="*", default=[], metavar="FIELD=JSON",
                   help="config overrides for every run, e.g. entropy_weight=0.01")  # fmt: skip
    args = p.parse_args(argv)
    known = MC_VARIANTS if args.which == "mountaincar" else VARIANTS
    if args.variants and not set(args.variants) <= set(known):
        p.error(f"--variants: expected some of {list(known)} for {args.which}, got {args.variants}")
    overrides = parse_overrides(p, args.set)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    out: dict = {"benchmark": f"reactor-{args.which}", "overrides": overrides}
    if args.which in ("cartpole", "ablation"):
        budget = args.budget or 50_000
        variants = ["full"] if args.which == "cartpole" else args.variants or list(VARIANTS)
        for name in variants:
            runs = [
                learning_run(
                    s,
                    work,
                    475.0,
                    total_env_steps=budget,
                    **{**CARTPOLE, **VARIANTS[name], **overrides},
                )
                for s in args.seeds
            ]
            out[name] = summarize(runs, budget, 475.0)
    elif args.which == "lunarlander":
        budget = args.budget or 600_000
        runs = [learning_run(s, work, 200.0, total_env_steps=budget, **{**LUNARLANDER, **overrides})
                for s in args.seeds]  # fmt: skip
        out["full"] = summarize(runs, budget, 200.0)
    else:
        budget = args.budget or 50_000
        for name in args.variants or list(MC_VARIANTS):
            runs = [
                learning_run(
                    s,
                    work,
                    -120.0,
                    total_env_steps=budget,
                    **{**MOUNTAINCAR, **MC_VARIANTS[name], **overrides},
                )
                for s in args.seeds
            ]
            out[name] = summarize(runs, budget, -120.0)
        out["demo_file"] = str(SHIPPED_MC_DEMO[0].relative_to(ROOT)) if SHIPPED_MC_DEMO else None
    json.dump(out, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    # the checkout this script is in, before an installed one: a second checkout (a trial
    # patch, bench_reactor_screen.py's runs of it) measures its own agent
    sys.path.insert(1, str(ROOT))
    sys.exit(main())

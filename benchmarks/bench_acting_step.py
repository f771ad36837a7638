"""The in-process acting step of R2D2 on CartPole-v1, in microseconds, for this tree and
others side by side; prints JSON.

  python benchmarks/bench_acting_step.py [--baseline-src DIR] [--rounds 5] [--steps 20000]

One env, the network of ``bench_r2d2_source.py``'s ``matched`` workload (``--hidden 32
--lstm 50``; ``--hidden 64 --lstm 64`` for R2D2's defaults) and its sequences (5 burn-in +
10 steps every 5). Each round runs every tree in its own process, in a rotating order, and
each process times:

* ``actor_us``: one ``VectorActor.step()`` per env step taken (what the run's acting phase
  asks of the pool), the sequences it completes included;
* ``acting_us``: the same with each step's sequences added to a prioritized replay, as the
  run's schedule does before learning starts;
* ``parts_us``: the network step with its selector, the env step, and the rest of the step
  (the writer, the counters, the bookkeeping) apart, from thread CPU time.

The process's CPU time per step (``thread_time``) is given beside the wall time: on a
shared machine it moves less with the load. ``load`` is ``os.getloadavg()`` before and
after each process.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def build(hidden: int, lstm: int):
    """A one-env actor of R2D2's defaults otherwise, as the run builds it."""
    import torch

    from agents.core.actor import ActorSpec, make_vector_actor
    from agents.core.agent import EnvInfo
    from agents.core.preprocess import make_preprocessor
    from agents.core.sequences import EndBehavior
    from agents.r2d2 import R2D2, R2D2Config
    from demostudio.episode import make_env

    torch.set_num_threads(1)
    torch.manual_seed(0)
    cfg = R2D2Config(env="CartPole-v1", device="cpu", burn_in=5, trace=10, period=5,
                     hidden=hidden, lstm=lstm)  # fmt: skip
    env = make_env(cfg.env)
    info = EnvInfo(cfg.env, env, make_preprocessor(env.observation_space))
    agent = R2D2(cfg)
    net = agent.build_networks(info)["main"]
    spec = ActorSpec(agent.make_env, net, agent.acting_selector(1), 1, info.preprocess,
                     cfg.sequence_length, cfg.period, EndBehavior.ZERO_PAD, env_seed=0,
                     policy_seed=2)  # fmt: skip
    return make_vector_actor(spec, torch.device("cpu")), cfg


def time_steps(actor, steps: int, replay) -> tuple[float, float]:
    """Wall and CPU microseconds per env step over ``steps`` env steps."""
    done, wall, cpu = 0, time.perf_counter(), time.thread_time()
    while done < steps:
        out = actor.step()
        done += out.env_steps
        if replay is not None and out.sequences is not None:
            replay.add(out.sequences)
    return ((time.perf_counter() - wall) / done * 1e6, (time.thread_time() - cpu) / done * 1e6)


def parts(actor, steps: int) -> dict:
    """CPU microseconds per env step of the network with its selector and of the env step,
    and the rest, timed by wrapping the two calls."""
    spent = {"policy": 0.0, "env": 0.0}

    def timed(name, fn):
        def run(*a, **k):
            t = time.thread_time()
            try:
                return fn(*a, **k)
            finally:
                spent[name] += time.thread_time() - t

        return run

    policy_act = actor.policy.act
    actor.policy.act = timed("policy", policy_act)
    envs = [timed("env", e.step) for e in actor.envs]
    originals = [e.step for e in actor.envs]
    for e, f in zip(actor.envs, envs):
        e.step = f
    _, cpu = time_steps(actor, steps, None)
    actor.policy.act = policy_act
    for e, f in zip(actor.envs, originals):
        e.step = f
    n = steps
    out = {k: round(v / n * 1e6, 1) for k, v in spent.items()}
    out["rest"] = round(cpu - out["policy"] - out["env"], 1)
    return out


def once(hidden: int, lstm: int, steps: int) -> dict:
    from agents.core.replay import PrioritizedSequenceReplay

    actor, cfg = build(hidden, lstm)
    time_steps(actor, 2000, None)  # warm: the first episodes, the numpy step built
    actor_wall, actor_cpu = time_steps(actor, steps, None)
    replay = PrioritizedSequenceReplay(cfg.replay_capacity, seed=0)
    acting_wall, acting_cpu = time_steps(actor, steps, replay)
    split = parts(actor, steps)
    actor.close()
    return {"actor_us": round(actor_wall, 1), "actor_cpu_us": round(actor_cpu, 1),
            "acting_us": round(acting_wall, 1), "acting_cpu_us": round(acting_cpu, 1),
            "parts_us": split}  # fmt: skip


KEYS = ("actor_us", "actor_cpu_us", "acting_us", "acting_cpu_us")


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--baseline-src", type=Path, default=None, help="another tree of this project")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--steps", type=int, default=20_000, help="env steps timed per measure")
    p.add_argument("--hidden", type=int, default=32)
    p.add_argument("--lstm", type=int, default=50)
    p.add_argument("--_once", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args._once:
        json.dump(once(args.hidden, args.lstm, args.steps), sys.stdout)
        return 0
    trees = {"ours": Path(__file__).resolve().parents[1]}
    if args.baseline_src:
        trees["baseline"] = args.baseline_src.resolve()
    names = list(trees)
    runs: dict[str, list[dict]] = {k: [] for k in trees}
    for rnd in range(args.rounds):
        shift = rnd % len(names)
        for who in names[shift:] + names[:shift]:
            cmd = [sys.executable, __file__, "--_once", "--steps", str(args.steps),
                   "--hidden", str(args.hidden), "--lstm", str(args.lstm)]  # fmt: skip
            env = dict(os.environ, PYTHONPATH=str(trees[who]))
            before = _load()
            res = subprocess.run(cmd, env=env, cwd=trees[who], capture_output=True, text=True)
            if res.returncode != 0:
                raise SystemExit(f"{who}: {res.stderr[-3000:]}")
            row = {"round": rnd, **json.loads(res.stdout), "load": [before, _load()]}
            print(json.dumps({"who": who, **row}), file=sys.stderr)
            runs[who].append(row)
    summary = {}
    for who, rows in runs.items():
        summary[who] = {k: round(statistics.median(r[k] for r in rows), 1) for k in KEYS}
        summary[who]["parts_us"] = {
            k: round(statistics.median(r["parts_us"][k] for r in rows), 1)
            for k in rows[0]["parts_us"]
        }
    if "baseline" in summary:
        summary["baseline_over_ours"] = {
            k: round(summary["baseline"][k] / summary["ours"][k], 2) for k in KEYS
        }
    out = {"benchmark": "acting-step", "command": " ".join(sys.argv), "cpus": os.cpu_count(),
           "trees": {k: str(v) for k, v in trees.items()}, "hidden": args.hidden,
           "lstm": args.lstm, "steps": args.steps, "runs": runs, "summary": summary}  # fmt: skip
    json.dump(out, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())

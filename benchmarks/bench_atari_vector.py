"""Env steps per second of the actors on an ALE game: a list of envs stepped in Python
against ale-py's vector env, side by side, interleaved, for several numbers of envs.

Prints JSON. Per number of envs and per round, in turn:

* ``python_env`` / ``ale_env_t{K}``: the actor's env stepping only (VectorActor's own
  ``_step_envs`` with next-step autoreset, then the actor's preprocess to 84x84 gray), a
  uniform random action per env; no network. ``ale`` is :mod:`agents.core.ale_vector`
  (full screens from C++, the same preprocess) with ``num_threads`` K (0: ale-py's default).
* ``python_actor`` / ``ale_actor_t{K}``: the whole ``VectorActor.step()`` of an R2D2
  agent at its defaults (acting network on the frames, Ape-X epsilons, sequence writers),
  one torch thread.
* ``ale_native84_t{K}``: ale-py resizing to 84x84 gray itself, nothing in Python: the
  ceiling of the vector env, with frames that differ from the preprocess's (another area
  resize), so not what the actors use.

Each figure: env steps per second of wall time and CPU milliseconds per env step (all
threads of the process), the median over rounds; ``uptime``'s load before and after.

    python benchmarks/bench_atari_vector.py --num-envs 8 16 32 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable

import numpy as np
import torch

from agents.core.actor import VectorActor
from agents.core.agent import EnvInfo
from agents.core.ale_vector import AleBatchEnvs, ale_settings
from agents.core.policy import BatchPolicy
from agents.core.preprocess import make_preprocessor
from agents.core.sequences import EndBehavior
from agents.r2d2 import R2D2, R2D2Config
from demostudio.episode import make_env


def _uptime() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _timed(run: Callable[[], int], min_steps: int) -> dict:
    """Calls ``run`` (env steps it took) until ``min_steps``: steps/s and CPU ms per step."""
    steps, wall, cpu = 0, time.perf_counter(), time.process_time()
    while steps < min_steps:
        steps += run()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"env_steps_per_s": steps / wall, "cpu_ms_per_env_step": 1000 * cpu / steps}


class Setup:
    """The agent, network and env facts shared by every variant."""

    def __init__(self, env_id: str):
        self.cfg = R2D2Config(env=env_id, device="cpu")
        env = make_env(env_id)
        self.settings = ale_settings(env)
        if self.settings is None:
            raise SystemExit(f"--env: expected a plain ALE env id, got {env_id!r}")
        self.info = EnvInfo(env_id, env, make_preprocessor(env.observation_space))
        self.space = env.observation_space
        self.num_actions = int(env.action_space.n)
        self.agent = R2D2(self.cfg)
        self.net = self.agent.build_networks(self.info)["main"]

    def actor(self, n: int, threads: int | None) -> VectorActor:
        """A VectorActor of ``n`` envs: the list (``threads`` None) or ale-py's vector env."""
        cfg = self.cfg
        policy = BatchPolicy.copy_of(self.net, self.agent.acting_selector(n), n,
                                     torch.device("cpu"), np.random.default_rng(0))  # fmt: skip
        batch = None if threads is None else AleBatchEnvs(self.settings, n, self.space, threads)
        return VectorActor([lambda: make_env(cfg.env) for _ in range(n)], policy,
                           self.info.preprocess, cfg.sequence_length, cfg.period,
                           EndBehavior.ZERO_PAD, seed=0, batch_envs=batch)  # fmt: skip


def env_only(actor: VectorActor, rng: np.random.Generator) -> Callable[[], int]:
    def run() -> int:
        actions = rng.integers(0, actor.policy.network.spec.num_actions, actor.n)
        obs, _, terminated, truncated = actor._step_envs(actions)
        actor.preprocess(obs)
        taken = int((~actor._autoreset).sum())
        actor._autoreset = terminated | truncated
        return taken

    return run


def native84(setup: Setup, n: int, threads: int, rng: np.random.Generator) -> Callable[[], int]:
    from ale_py.vector_env import AtariVectorEnv

    s = {k: v for k, v in setup.settings.items() if k not in ("img_height", "img_width")}
    s["grayscale"] = True
    vec = AtariVectorEnv(num_envs=n, num_threads=threads, stack_num=1, maxpool=False,
                         noop_max=0, use_fire_reset=False, reward_clipping=False, **s)  # fmt: skip
    vec.reset(seed=0)

    def run() -> int:
        vec.step(rng.integers(0, setup.num_actions, n))
        return n

    return run


def one_round(setup: Setup, n: int, threads: list[int], min_steps: int, actor_steps: int) -> dict:
    rng = np.random.default_rng(0)
    out: dict[str, dict] = {}
    backends: list[tuple[str, int | None]] = [("python", None)]
    backends += [(f"ale_t{k}", k) for k in threads]
    for name, k in backends:
        actor = setup.actor(n, k)
        for _ in range(3):
            actor.step()
        out[f"{name.split('_')[0]}_env{name[len('ale') :] if k is not None else ''}"] = _timed(
            env_only(actor, rng), min_steps
        )
        actor._autoreset[:] = False  # the env-only loop left no pending reset unseen
        out[f"{name.split('_')[0]}_actor{name[len('ale') :] if k is not None else ''}"] = _timed(
            lambda a=actor: a.step().env_steps, actor_steps
        )
        actor.close()
    for k in threads:
        run = native84(setup, n, k, rng)
        run()
        out[f"ale_native84_t{k}"] = _timed(run, min_steps)
    return out


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--env", default="ALE/Breakout-v5")
    p.add_argument("--num-envs", type=int, nargs="+", default=[8, 16, 32])
    p.add_argument("--threads", type=int, nargs="+", default=[2, 0],
                   help="ale-py num_threads values to measure (0: its default)")  # fmt: skip
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--min-steps", type=int, default=1500, help="env steps per env-only figure")
    p.add_argument("--actor-steps", type=int, default=600, help="env steps per actor figure")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    setup = Setup(args.env)
    out: dict = {
        "benchmark": "atari-vector",
        "env": args.env,
        "settings": setup.settings,
        "cpus": os.cpu_count(),
        "torch_threads": 1,
        "load_before": _uptime(),
    }
    rows: dict[int, list[dict]] = {n: [] for n in args.num_envs}
    for _ in range(args.rounds):
        for n in args.num_envs:
            rows[n].append(one_round(setup, n, args.threads, args.min_steps, args.actor_steps))
    out["load_after"] = _uptime()
    for n, rounds in rows.items():
        res: dict = {}
        for key in rounds[0]:
            sps = [r[key]["env_steps_per_s"] for r in rounds]
            cpu = [r[key]["cpu_ms_per_env_step"] for r in rounds]
            res[key] = {
                "env_steps_per_s": round(statistics.median(sps), 1),
                "cpu_ms_per_env_step": round(statistics.median(cpu), 3),
                "rounds_env_steps_per_s": [round(x, 1) for x in sps],
            }
        for part in ("env", "actor"):
            base = res[f"python_{part}"]["env_steps_per_s"]
            for k in args.threads:
                res[f"ale_t{k}_over_python_{part}"] = round(
                    res[f"ale_{part}_t{k}"]["env_steps_per_s"] / base, 2
                )
        out[f"num_envs_{n}"] = res
    return out


if __name__ == "__main__":
    print(json.dumps(main(), indent=1))

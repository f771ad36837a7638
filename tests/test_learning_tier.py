"""The fast learning tier (in the default run): each algorithm, from a fixed seed, reaches a
stated evaluation return on a small task with the shipped demos, so a change that breaks
learning fails `make test`.

Each case stops at its first evaluation that reaches the threshold (``stop_return``), and
fails if none does within its budget. The thresholds, beside what chance gets:

=========  =======================  =========  =======  =============================
algorithm  task                     threshold  chance   seed 0 (env steps: eval mean)
=========  =======================  =========  =======  =============================
bc         CartPole-v1, 2 demos     >= 300     ~22      200 updates: 424.7
dqfd       MountainCar-v0, 5 demos  >= -160    -200     4k: -151.3 (-200 up to 3k)
r2d2       CartPole-v1              >= 200     ~22      2k: 108.7, 4k: 148.7, 6k: 259.0
r2d3       CartPole-v1, 2 demos     >= 200     ~22      2k: 122.3, 4k: 496.7
sqil       CartPole-v1, 2 demos     >= 200     ~22      2k: 186.7, 4k: 500.0
=========  =======================  =========  =======  =============================

(MountainCar's -200 means the flag was never reached in 200 steps; the runs are
deterministic on one machine: repeated runs of a seed gave the same evaluations.)

Each takes well under a minute of one core: measured CPU seconds bc 2.7, dqfd 14.5, r2d2
24.2, r2d3 19.4, sqil 18.1 (79 s for the tier).
The actor-critic and on-policy agents have theirs beside their other tests, in the same
default run: reactor (CartPole-v1 >= 200 within 8k env steps) in tests/agents_reactor/
test_learning.py; ppo (CartPole-v1 >= 300 within 40k) and rnd-ppo (MiniGrid-Empty-5x5 >= 0.8
within 20k) in tests/agents_rnd_ppo/test_learning.py.
The longer targets (MountainCar from one demo, DoorKey) are in tests/agents/
test_learning_slow.py and benchmarks/bench_agents.py.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from agents.registry import get_algorithm

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")

DEMOS = Path(__file__).resolve().parent.parent / "demos"

RUN = dict(seed=0, device="cpu", torch_threads=1, progress=False, tensorboard=False)
SMALL_Q = dict(num_actors=4, hidden=32, lstm=32, burn_in=0, trace=8, period=4, batch_size=32,
               min_replay=32, env_steps_per_update=2.0, target_update_every=100,
               eval_episodes=3, eval_every=2000)  # fmt: skip
"""A small recurrent Q-learner: 9-step sequences, 32-unit layers, 2 env steps per update."""

CASES: dict[str, tuple[float, dict[str, Any]]] = {
    "r2d2": (200.0, dict(env="CartPole-v1", total_env_steps=12_000, **SMALL_Q)),
    "r2d3": (
        200.0,
        dict(env="CartPole-v1", demos=(DEMOS / "CartPole-v1",), total_env_steps=12_000, **SMALL_Q),
    ),
    "dqfd": (
        -160.0,
        dict(
            env="MountainCar-v0",
            demos=(DEMOS / "MountainCar-v0",),
            pretrain_updates=500,
            total_env_steps=10_000,
            eval_every=1000,
            eval_episodes=3,
        ),
    ),
    "sqil": (
        200.0,
        dict(env="CartPole-v1", demos=(DEMOS / "CartPole-v1",), total_env_steps=12_000, **SMALL_Q),
    ),
    "bc": (
        300.0,
        dict(
            env="CartPole-v1",
            demos=(DEMOS / "CartPole-v1",),
            hidden=32,
            max_updates=200,
            eval_every=200,
            eval_episodes=3,
        ),
    ),
}
"""algorithm -> (evaluation mean return to reach, config)."""


@pytest.mark.timeout(300)
@pytest.mark.parametrize("algo", sorted(CASES))
def test_algorithm_learns(algo, tmp_path):
    threshold, overrides = CASES[algo]
    entry = get_algorithm(algo)
    fields = entry.config_cls.__dataclass_fields__
    stop = {"stop_return": threshold} if "stop_return" in fields else {}
    cfg = entry.config_cls(**RUN, **overrides, **stop, run_dir=tmp_path / "run")
    result = entry.train(cfg)
    best = max(r for _, r in result.evals)
    assert best >= threshold, f"{algo}: evaluations {result.evals} never reached {threshold}"

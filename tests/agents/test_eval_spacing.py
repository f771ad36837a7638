"""Evaluations come every ``eval_every`` env steps while their episodes are short and
further apart where they are long, so evaluating never costs more env steps than a fixed
multiple of training."""

from __future__ import annotations

import itertools
import json

from agents.core.loop import EVAL_STEPS_PER_ENV_STEP, next_eval_at
from agents.r2d2 import R2D2Config, train_r2d2


def test_short_evaluations_keep_the_cadence():
    assert next_eval_at(1000, 1000, 600) == 2000
    assert next_eval_at(1003, 1000, 5 * 1000) == 2000  # exactly the allowance
    assert next_eval_at(1003, 1000, 0) == 2000


def test_long_evaluations_move_the_next_one_to_a_later_multiple():
    assert next_eval_at(1000, 1000, 5 * 1001) == 3000
    assert next_eval_at(1000, 1000, 20 * 640) == 4000  # 20 MiniGrid episodes to their limit
    assert next_eval_at(1000, 0, 10) == float("inf")


def test_a_run_spaces_its_evaluations_by_what_they_played(tmp_path):
    cfg = R2D2Config(
        env="CartPole-v1", num_actors=2, hidden=16, lstm=16, burn_in=2, trace=6, period=3,
        batch_size=8, min_replay=8, env_steps_per_update=8.0, eval_every=20, eval_episodes=30,
        total_env_steps=400, tensorboard=False, device="cpu", stop_when="off", progress=False,
        run_dir=tmp_path / "run", mirror="off",
    )  # fmt: skip
    train_r2d2(cfg)
    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").open()]
    evals = [r for r in rows if r["kind"] == "eval"][:-1]  # the run's end has its own
    assert len(evals) >= 2
    gaps = []
    for a, b in itertools.pairwise(evals):
        played = a["eval_length"] * cfg.eval_episodes
        gaps.append(b["env_steps"] - a["env_steps"])
        assert gaps[-1] >= played / EVAL_STEPS_PER_ENV_STEP - cfg.num_actors
    assert max(gaps) >= 2 * cfg.eval_every  # 30 CartPole episodes play over 200 env steps

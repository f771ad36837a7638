"""``--eval-epsilon``'s default follows the observations: 0.05 on grids and images, where a
greedy policy can repeat an action that changes nothing to the time limit, greedy
otherwise. The run saves what it used, and a restored checkpoint plays with it unless told
otherwise; a saved value that is not a probability is one error line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agents.core.evaluate import SPATIAL_EVAL_EPSILON, default_eval_epsilon
from agents.core.preprocess import obs_spec
from agents.core.restore import restore_agent
from agents.r2d2 import R2D2Config, train_r2d2
from demostudio.episode import make_env
from tests.agents.test_hostile_checkpoints import _error_line, _payload, _run_dir

SMALL = dict(num_actors=2, hidden=8, lstm=8, burn_in=0, trace=4, period=4, batch_size=4,
             min_replay=2, total_env_steps=60, eval_every=0, eval_episodes=1,
             progress=False, tensorboard=False, device="cpu")  # fmt: skip


@pytest.mark.parametrize(
    ("env_id", "expected"),
    [("MiniGrid-Empty-5x5-v0", SPATIAL_EVAL_EPSILON), ("CartPole-v1", 0.0)],
)
def test_the_default_follows_the_observations(env_id, expected):
    env = make_env(env_id)
    try:
        assert default_eval_epsilon(obs_spec(env.observation_space)) == expected
    finally:
        env.close()


@pytest.mark.parametrize(
    ("env_id", "given", "saved"),
    [
        ("MiniGrid-Empty-5x5-v0", None, 0.05),
        ("CartPole-v1", None, 0.0),
        ("MiniGrid-Empty-5x5-v0", 0.0, 0.0),
    ],
)
def test_a_run_saves_the_epsilon_it_evaluated_with(tmp_path, env_id, given, saved):
    run = tmp_path / "run"
    cfg = R2D2Config(env=env_id, run_dir=run, **SMALL, eval_epsilon=given)
    train_r2d2(cfg)
    assert json.loads((run / "config.json").read_text())["eval_epsilon"] == saved
    agent = restore_agent(run)  # plays as the run's evaluations did
    assert np.array_equal(agent.controller.policy.selector.epsilons, [saved])
    assert restore_agent(run, epsilon=0.25).controller.policy.selector.epsilons[0] == 0.25


def test_a_checkpoint_without_the_field_gets_the_default(tmp_path):
    payload = _payload()
    del payload["config"]["eval_epsilon"]  # written before the field had a default
    run, _ = _run_dir(tmp_path, payload)
    assert restore_agent(run).controller.policy.selector.epsilons[0] == 0.0


@pytest.mark.parametrize("bad", [1.5, -0.1, "0.1", True])
def test_a_saved_epsilon_that_is_not_a_probability_is_one_line(tmp_path, capsys, bad):
    payload = _payload()
    payload["config"]["eval_epsilon"] = bad
    run, final = _run_dir(tmp_path, payload)
    argv = ["evaluate", str(run), "--episodes", "1", "--device", "cpu"]
    line = _error_line(argv, capsys)
    assert f"{final} [config.eval_epsilon]: expected a number in [0, 1], got {bad!r}" in line

"""Success is the env's goal reached, where the env has one (agents.core.evaluate): every
MountainCar episode at the flag succeeds though its return is negative; CartPole has no goal,
so no success is counted, logged or printed."""

from __future__ import annotations

import math

import gymnasium as gym
import pytest

from agents.core.checkpoint import save_checkpoint
from agents.core.evaluate import goal_rule, reached_goal, run_episodes
from agents.core.logger import read_metrics
from demostudio.cli import main
from tests.agents.test_hostile_checkpoints import _payload


class Script:
    """A controller from a function of the observation."""

    def __init__(self, act):
        self._act = act

    def reset(self, env, obs, info) -> None:
        pass

    def act(self, env, obs):
        return self._act(obs)

    def observe_reward(self, reward: float) -> None:
        pass


PUMP = Script(lambda obs: 2 if obs[1] >= 0 else 0)  # push with the velocity: reaches the flag
IDLE = Script(lambda obs: 1)  # never pushes: the time limit ends every episode


def test_mountain_car_at_the_flag_is_a_success_with_a_negative_return():
    env = gym.make("MountainCar-v0")
    result = run_episodes(env, PUMP, 3, seed=0)
    assert all(r < 0 for r in result.returns) and result.successes == [True, True, True]
    assert result.success_rate == 1.0
    idle = run_episodes(env, IDLE, 2, seed=0)
    assert idle.lengths == [200, 200] and idle.successes == [False, False]
    assert idle.success_rate == 0.0


def test_cartpole_has_no_success():
    result = run_episodes(gym.make("CartPole-v1"), Script(lambda obs: 0), 2, seed=0)
    assert result.successes is None and math.isnan(result.success_rate)


@pytest.mark.parametrize(
    ("env_id", "rule"),
    [
        ("MountainCar-v0", "terminated"),
        ("MountainCarContinuous-v0", "terminated"),
        ("Acrobot-v1", "terminated"),
        ("MiniGrid-DoorKey-8x8-v0", "terminated_positive"),
        ("BabyAI-GoToRedBall-v0", "terminated_positive"),
        ("LunarLander-v3", "terminated_positive"),
        ("CartPole-v1", None),
        ("Pendulum-v1", None),
        ("ALE/Breakout-v5", None),
        (None, None),
    ],
)
def test_goal_rules(env_id, rule):
    assert goal_rule(env_id) == rule


def test_a_lander_that_crashed_did_not_land():
    assert reached_goal("terminated_positive", True, 100.0)  # at rest on the pad
    assert not reached_goal("terminated_positive", True, -100.0)  # crashed
    assert not reached_goal("terminated_positive", False, 100.0)  # cut off by the time limit
    assert not reached_goal("terminated", False, -1.0)


def _checkpoint(tmp_path, env_id: str):
    payload = _payload()
    if env_id != "CartPole-v1":  # same network shape is not needed: rebuild for the env
        from agents.core.agent import EnvInfo
        from agents.core.config import config_to_dict
        from agents.core.networks import RecurrentNetwork
        from agents.core.preprocess import make_preprocessor
        from agents.r2d2 import R2D2, R2D2Config

        cfg = R2D2Config(env=env_id, hidden=8, lstm=8, progress=False, tensorboard=False,
                         device="cpu")  # fmt: skip
        env = gym.make(env_id)
        specs = R2D2(cfg).network_specs(
            EnvInfo(env_id, env, make_preprocessor(env.observation_space))
        )
        nets = {k: RecurrentNetwork(s) for k, s in specs.items()}
        payload.update(
            config=config_to_dict(cfg),
            network_specs={k: s.to_json() for k, s in specs.items()},
            networks={k: n.state_dict() for k, n in nets.items()},
        )
    final = tmp_path / "run" / "checkpoints" / "final.pt"
    final.parent.mkdir(parents=True)
    save_checkpoint(final, payload)
    return tmp_path / "run"


def test_evaluate_counts_goals_only_where_the_env_has_one(tmp_path, capsys):
    cart = _checkpoint(tmp_path / "c", "CartPole-v1")
    assert main(["evaluate", str(cart), "--episodes", "2", "--device", "cpu"]) == 0
    said = capsys.readouterr().out.splitlines()[-1].rsplit("env steps): ", 1)[1]
    assert said.startswith("mean return ") and said.endswith(" over 2 episodes")
    car = _checkpoint(tmp_path / "m", "MountainCar-v0")
    assert main(["evaluate", str(car), "--episodes", "1", "--device", "cpu"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].endswith("0 of 1 reached the goal")


def test_a_cartpole_run_logs_no_success(tmp_path):
    run = tmp_path / "run"
    argv = ["train", "r2d2", "--env", "CartPole-v1", "--total-env-steps", "40", "--hidden", "8",
            "--lstm", "8", "--device", "cpu", "--run-dir", str(run), "--no-progress",
            "--no-tensorboard", "--eval-every", "20", "--eval-episodes", "1"]  # fmt: skip
    assert main(argv) == 0
    evals = [row for row in read_metrics(run) if row["kind"] == "eval"]
    assert evals and all("eval_return" in r and "eval_success" not in r for r in evals)

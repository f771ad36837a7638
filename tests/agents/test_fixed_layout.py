"""--fixed-layout: every episode of a procedurally generated env (MiniGrid) starts from the
layout that --seed draws, in training and in evaluation, for every family's make_env."""

from __future__ import annotations

import json

import gymnasium as gym
import minigrid  # noqa: F401  (registers the MiniGrid envs)
import numpy as np
import pytest

from agents.core.restore import restore_agent
from agents.r2d2 import R2D2, R2D2Config
from agents.rnd_ppo import RNDPPO
from demostudio.cli import main
from tests.agents_rnd_ppo.helpers import tiny

ENV = "MiniGrid-DoorKey-8x8-v0"


def layouts(env, seeds) -> list[bytes]:
    out = []
    for seed in seeds:
        env.reset(seed=seed)
        base = env.unwrapped
        out.append(base.grid.encode().tobytes() + bytes([*base.agent_pos, base.agent_dir]))
    return out


@pytest.mark.parametrize("family", ["r2d2", "rnd-ppo"])
def test_every_reset_draws_the_seeds_layout(tmp_path, family):
    def agent(fixed):
        if family == "r2d2":
            return R2D2(R2D2Config(env=ENV, seed=7, fixed_layout=fixed, run_dir=tmp_path))
        return RNDPPO(tiny(tmp_path, env=ENV, seed=7, fixed_layout=fixed))

    fixed = layouts(agent(True).make_env(), [None, 1, 2, None, 99])
    assert len(set(fixed)) == 1
    drawn = layouts(agent(False).make_env(), [7])
    assert fixed[0] == drawn[0]  # the layout of reset(seed=--seed)
    assert len(set(layouts(agent(False).make_env(), [1, 2, 3, 4]))) > 1


def test_an_episode_plays_as_the_plain_env_reset_with_the_seed():
    """Only the reset changes: the steps after it are the env's own."""
    env = R2D2(R2D2Config(env=ENV, seed=3, fixed_layout=True)).make_env()
    plain = gym.make(ENV)
    obs, plain_obs = env.reset(seed=11)[0], plain.reset(seed=3)[0]
    actions = [2, 2, 1, 2, 0, 2, 3, 5, 2, 2]  # forward, turn, pickup, toggle
    for action in actions:
        np.testing.assert_array_equal(obs["image"], plain_obs["image"])
        obs, reward, terminated, truncated, _ = env.step(action)
        plain_obs, *plain_rest = plain.step(action)
        assert [reward, terminated, truncated] == plain_rest[:3]
    np.testing.assert_array_equal(obs["image"], plain_obs["image"])


def test_cli_run_keeps_the_layout_in_its_checkpoint(tmp_path):
    """Through the CLI: the flag lands in config.json, and the restored agent (evaluate,
    watch) plays the layout it was trained on."""
    run = tmp_path / "cli"
    rc = main(["train", "ppo", "--env", "MiniGrid-DoorKey-5x5-v0", "--fixed-layout",
               "--seed", "5", "--num-envs", "2", "--rollout-length", "8", "--segment-length",
               "8", "--num-minibatches", "1", "--total-env-steps", "32", "--hidden", "8",
               "--lstm", "8", "--eval-every", "0", "--eval-episodes", "1", "--no-progress",
               "--no-tensorboard", "--run-dir", str(run)])  # fmt: skip
    assert rc == 0
    assert json.loads((run / "config.json").read_text())["fixed_layout"] is True
    restored = restore_agent(run / "checkpoints" / "final.pt")
    assert len(set(layouts(restored.make_env(), [None, 1, 2]))) == 1

"""--rnd-full-grid: MiniGrid's whole grid as the RND networks' input. The leaf marks the
agent's cell and direction and follows the key and the door; the policy's network is built
without it; demos recorded without it still train; a non-MiniGrid env is a clean error."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from minigrid.core.constants import OBJECT_TO_IDX

from agents.core.checkpoint import load_checkpoint
from agents.core.run import train
from agents.registry import get_algorithm
from agents.rnd_ppo import RNDPPO, RNDPPOConfig
from agents.rnd_ppo.full_grid import FULL_GRID, FullGridObservation
from tests.agents_rnd_ppo.helpers import tiny

DOORKEY = "MiniGrid-DoorKey-5x5-v0"
DEMOS = "demos/MiniGrid-DoorKey-8x8-v0"


def test_leaf_marks_the_agent_and_follows_the_key():
    env = FullGridObservation(gym.make(DOORKEY), DOORKEY)
    obs, _ = env.reset(seed=3)
    base = env.unwrapped
    grid = obs[FULL_GRID]
    assert grid.shape == (5, 5, 3) and grid.dtype == np.uint8
    assert env.observation_space[FULL_GRID].contains(grid)
    x, y = base.agent_pos
    assert tuple(grid[x, y]) == (OBJECT_TO_IDX["agent"], 0, base.agent_dir)
    assert (grid[..., 0] == OBJECT_TO_IDX["agent"]).sum() == 1
    assert (grid[..., 0] == OBJECT_TO_IDX["key"]).sum() == 1
    turned, *_ = env.step(base.actions.left)
    assert turned[FULL_GRID][x, y, 2] == base.agent_dir != grid[x, y, 2]
    # walk to the key and pick it up: the key leaves the grid
    kx, ky = np.argwhere(grid[..., 0] == OBJECT_TO_IDX["key"])[0]
    base.agent_pos = (kx - 1, ky) if grid[kx - 1, ky, 0] == OBJECT_TO_IDX["empty"] else (kx, ky - 1)
    base.agent_dir = 0 if base.agent_pos[1] == ky else 1
    picked, *_ = env.step(base.actions.pickup)
    assert base.carrying is not None
    assert (picked[FULL_GRID][..., 0] == OBJECT_TO_IDX["key"]).sum() == 0


def test_non_minigrid_env_is_a_clean_error(tmp_path):
    with pytest.raises(
        ValueError, match="--rnd-full-grid: expected a MiniGrid env, got 'CartPole-v1'"
    ):
        get_algorithm("rnd-ppo").train(tiny(tmp_path / "run", rnd_full_grid=True))


def test_rnd_reads_the_grid_and_the_policy_does_not(tmp_path):
    """With demos recorded without the leaf: BC pre-training and the BC loss still run."""
    cfg = tiny(tmp_path / "run", env="MiniGrid-DoorKey-8x8-v0", rnd_full_grid=True,
               total_env_steps=64, demos=(Path(DEMOS),), bc_pretrain_updates=2,
               bc_coef=1.0)  # fmt: skip
    agent = RNDPPO(cfg)
    result = train(agent)
    assert result.env_steps >= 64
    assert agent.bonus.leaf == FULL_GRID and agent.bonus.reward.shape == (8, 8, 3)
    payload = load_checkpoint(result.run_dir / "checkpoints" / "final.pt")
    spec = payload["network_specs"]["main"]["obs_spec"]
    assert FULL_GRID not in spec and "image" in spec
    lines = (result.run_dir / "metrics.jsonl").read_text().splitlines()
    rows = [json.loads(x) for x in lines]
    assert any(r["kind"] == "pretrain" for r in rows)
    assert any(r["kind"] == "train" and r.get("bc_coef", 0) > 0 for r in rows)


def test_leaf_conflicts_with_another_rnd_leaf():
    with pytest.raises(ValueError, match="--rnd-leaf"):
        RNDPPOConfig(env=DOORKEY, rnd_full_grid=True, rnd_leaf="image").validate()

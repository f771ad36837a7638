"""The grid planners solve their tasks from the true grid: every registered KeyCorridor and
ObstructedMaze env, seed after seed, ends terminated with a positive reward (the ball picked
up) within the env's own step limit."""

from __future__ import annotations

import pytest

from demostudio.controllers import SCRIPTED, scripted_controller
from demostudio.controllers.grid import DROP, PICKUP, TOGGLE
from demostudio.episode import ensure_registered, make_env

TASKS = {"MiniGrid-KeyCorridorS3R3-v0": 20, "MiniGrid-ObstructedMaze-1Dlh-v0": 20}
"""The tasks of the human-style sample demos: 20 seeds each."""
OTHERS = sorted(
    e for e in SCRIPTED if e.startswith(("MiniGrid-KeyCorridor", "MiniGrid-ObstructedMaze"))
)


def _solve(env_id: str, seed: int) -> tuple[int, float, bool, list[int]]:
    ensure_registered(env_id)
    env = make_env(env_id)
    planner = scripted_controller(env_id)
    obs, info = env.reset(seed=seed)
    planner.reset(env, obs, info)
    actions: list[int] = []
    while True:
        action = planner.act(env, obs)
        actions.append(int(action))
        obs, reward, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.close()
            return len(actions), float(reward), terminated, actions


@pytest.mark.parametrize("env_id", sorted(TASKS))
def test_the_planner_solves_20_seeds(env_id):
    limit = make_env(env_id).unwrapped.max_steps
    for seed in range(TASKS[env_id]):
        steps, reward, terminated, actions = _solve(env_id, seed)
        assert terminated and reward > 0, f"{env_id} seed {seed}: not solved in {steps} steps"
        assert steps < limit
        assert actions.count(TOGGLE) >= 1 and actions[-1] == PICKUP  # a door opened, the ball


@pytest.mark.parametrize("env_id", [e for e in OTHERS if e not in TASKS])
def test_every_registered_variant_is_solved(env_id):
    for seed in range(3):
        steps, reward, terminated, _ = _solve(env_id, seed)
        assert terminated and reward > 0, f"{env_id} seed {seed}: not solved in {steps} steps"


def test_a_ball_blocking_the_door_is_moved_aside():
    """ObstructedMaze-1Dlhb: a ball stands in the only cell the locked door is opened from;
    the planner picks it up and drops it where it blocks nothing, then opens the door."""
    for seed in range(5):
        _, reward, terminated, actions = _solve("MiniGrid-ObstructedMaze-1Dlhb-v0", seed)
        assert terminated and reward > 0
        assert actions.count(PICKUP) >= 3 and actions.count(DROP) >= 2  # ball, key, goal


def test_keycorridor_carries_the_key_and_drops_it_for_the_ball():
    """The key is picked up, the locked door opened with it, then put down (one object at a
    time) before the ball is picked up."""
    _, reward, terminated, actions = _solve("MiniGrid-KeyCorridorS3R3-v0", 0)
    assert terminated and reward > 0
    assert actions.count(PICKUP) == 2 and actions.count(DROP) == 1
    assert actions.index(PICKUP) < actions.index(DROP) < len(actions) - 1

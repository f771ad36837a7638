"""Hand-written (not learned) controllers used to record the bundled sample demos.

* MountainCar-v0: pump energy by pushing in the direction of motion.
* CartPole-v1: a linear feedback law on pole angle, angular velocity and cart motion.
* LunarLander-v3: Gymnasium's own heuristic lander.
* MiniGrid-DoorKey-*: a breadth-first planner over the true grid: fetch the key, open the
  door, walk to the goal.
* MiniGrid-KeyCorridor-*, MiniGrid-ObstructedMaze-1Dl/1Dlh/1Dlhb: the same search, deciding
  each step: open the doors on the way, move the ball that blocks the locked door, get its
  key (out of its box), open it, pick up the ball behind it
  (:mod:`demostudio.controllers.grid`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

from .grid import DoorKeyPlanner, RoomPlanner


class RandomController:
    """Uniformly random actions from the action space (seeded)."""

    name = "policy:random"

    def __init__(self, seed: int | None = None):
        self._seed = seed

    def reset(self, env: gym.Env, observation: Any, info: dict) -> None:
        if self._seed is not None:
            env.action_space.seed(self._seed)
            self._seed = None

    def act(self, env: gym.Env, observation: Any) -> Any:
        return env.action_space.sample()


class _Stateless:
    def __init__(self, name: str, policy: Callable[[gym.Env, Any], Any]):
        self.name = f"policy:scripted-{name}"
        self._policy = policy

    def reset(self, env: gym.Env, observation: Any, info: dict) -> None:
        pass

    def act(self, env: gym.Env, observation: Any) -> Any:
        return self._policy(env, observation)


def _mountain_car(env: gym.Env, obs: np.ndarray) -> int:
    return 2 if obs[1] >= 0 else 0


def _cart_pole(env: gym.Env, obs: np.ndarray) -> int:
    x, x_dot, theta, theta_dot = obs
    return int(theta + 0.5 * theta_dot + 0.01 * x + 0.1 * x_dot > 0)


def _lunar_lander(env: gym.Env, obs: np.ndarray) -> Any:
    from gymnasium.envs.box2d.lunar_lander import heuristic

    return heuristic(env.unwrapped, obs)


SCRIPTED: dict[str, Callable[[], Any]] = {
    "MountainCar-v0": lambda: _Stateless("mountaincar", _mountain_car),
    "CartPole-v1": lambda: _Stateless("cartpole", _cart_pole),
    "LunarLander-v3": lambda: _Stateless("lunarlander", _lunar_lander),
    "MiniGrid-DoorKey-5x5-v0": DoorKeyPlanner,
    "MiniGrid-DoorKey-6x6-v0": DoorKeyPlanner,
    "MiniGrid-DoorKey-8x8-v0": DoorKeyPlanner,
    "MiniGrid-DoorKey-16x16-v0": DoorKeyPlanner,
    **{
        f"MiniGrid-KeyCorridorS{s}R{r}-v0": lambda: RoomPlanner("keycorridor")
        for s, r in ((3, 1), (3, 2), (3, 3), (4, 3), (5, 3), (6, 3))
    },
    **{
        f"MiniGrid-ObstructedMaze-{v}-v0": lambda: RoomPlanner("obstructedmaze")
        for v in ("1Dl", "1Dlh", "1Dlhb")
    },
}


def scripted_controller(env_id: str) -> Any:
    """The scripted controller for ``env_id``; ValueError naming the ones that exist."""
    try:
        return SCRIPTED[env_id]()
    except KeyError:
        raise ValueError(
            f"expected an env with a scripted controller ({', '.join(SCRIPTED)}), got {env_id!r}"
        ) from None

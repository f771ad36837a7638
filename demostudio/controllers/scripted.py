"""Hand-written (not learned) controllers used to record the bundled sample demos.

* MountainCar-v0: pump energy by pushing in the direction of motion.
* CartPole-v1: a linear feedback law on pole angle, angular velocity and cart motion.
* LunarLander-v3: Gymnasium's own heuristic lander.
* MiniGrid-DoorKey-*: a breadth-first planner over the true grid: fetch the key, open the
  door, walk to the goal.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np


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


# MiniGrid actions and directions (0 = right, 1 = down, 2 = left, 3 = up).
_LEFT, _RIGHT, _FORWARD, _PICKUP, _TOGGLE = 0, 1, 2, 3, 5
_DIR_VEC = ((1, 0), (0, 1), (-1, 0), (0, -1))


class DoorKeyPlanner:
    """Plans on the true grid: go to the key, pick it up, open the door, go to the goal."""

    name = "policy:scripted-doorkey"

    def __init__(self) -> None:
        self._plan: deque[int] = deque()

    def reset(self, env: gym.Env, observation: Any, info: dict) -> None:
        self._plan.clear()

    def _find(self, grid, kind: str) -> tuple[int, int] | None:
        for j in range(grid.height):
            for i in range(grid.width):
                cell = grid.get(i, j)
                if cell is not None and cell.type == kind:
                    return (i, j)
        return None

    def _route(self, base, target: tuple[int, int], stand_on: bool) -> list[int]:
        """Shortest action list from the agent's pose to facing (or standing on) ``target``."""
        grid = base.grid
        start = (tuple(base.agent_pos), int(base.agent_dir))
        frontier = deque([start])
        came: dict = {start: None}
        while frontier:
            pos, d = frontier.popleft()
            front = (pos[0] + _DIR_VEC[d][0], pos[1] + _DIR_VEC[d][1])
            if (stand_on and pos == target) or (not stand_on and front == target):
                actions = []
                node = (pos, d)
                while came[node] is not None:
                    node, action = came[node]
                    actions.append(action)
                return actions[::-1]
            moves = [((pos, (d - 1) % 4), _LEFT), ((pos, (d + 1) % 4), _RIGHT)]
            cell = grid.get(*front)
            if cell is None or cell.can_overlap():
                moves.append(((front, d), _FORWARD))
            for nxt, action in moves:
                if nxt not in came:
                    came[nxt] = ((pos, d), action)
                    frontier.append(nxt)
        return []

    def act(self, env: gym.Env, observation: Any) -> int:
        if self._plan:
            return self._plan.popleft()
        base = env.unwrapped
        key = self._find(base.grid, "key")
        door = self._find(base.grid, "door")
        if base.carrying is None and key is not None:
            self._plan.extend([*self._route(base, key, False), _PICKUP])
        elif door is not None and not base.grid.get(*door).is_open:
            self._plan.extend([*self._route(base, door, False), _TOGGLE])
        else:
            goal = self._find(base.grid, "goal")
            self._plan.extend(self._route(base, goal, True) if goal else [_FORWARD])
        return self._plan.popleft() if self._plan else _FORWARD


SCRIPTED: dict[str, Callable[[], Any]] = {
    "MountainCar-v0": lambda: _Stateless("mountaincar", _mountain_car),
    "CartPole-v1": lambda: _Stateless("cartpole", _cart_pole),
    "LunarLander-v3": lambda: _Stateless("lunarlander", _lunar_lander),
    "MiniGrid-DoorKey-5x5-v0": DoorKeyPlanner,
    "MiniGrid-DoorKey-6x6-v0": DoorKeyPlanner,
    "MiniGrid-DoorKey-8x8-v0": DoorKeyPlanner,
    "MiniGrid-DoorKey-16x16-v0": DoorKeyPlanner,
}


def scripted_controller(env_id: str) -> Any:
    """The scripted controller for ``env_id``; ValueError naming the ones that exist."""
    try:
        return SCRIPTED[env_id]()
    except KeyError:
        raise ValueError(
            f"expected an env with a scripted controller ({', '.join(SCRIPTED)}), got {env_id!r}"
        ) from None

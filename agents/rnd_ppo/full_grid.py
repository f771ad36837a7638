"""MiniGrid's whole grid as an extra observation leaf, for the RND networks only
(``--rnd-full-grid``).

The policy sees MiniGrid's egocentric 7x7 view. Read by RND, that view makes the first room
novel for a long time (every wall angle and turn is a new view) while telling the two
rooms of DoorKey apart poorly. The whole grid, ``grid.encode()`` with the agent's cell set
to (agent, red, direction) as MiniGrid's FullyObsWrapper draws it, changes with the agent's
cell and direction, the key picked up and the door opened: RND's error on it works like a
count over those states, the signal Atari frames carry in the RND paper. The policy's network is
built without this leaf (``policy_spec``) and demos recorded without it still load.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from agents.core.preprocess import ObsSpec

FULL_GRID = "full_grid"


class FullGridObservation(gym.ObservationWrapper):
    """Adds ``full_grid`` (``[width, height, 3]`` uint8) to a MiniGrid env's Dict observation."""

    def __init__(self, env: gym.Env, env_id: str):
        super().__init__(env)
        base = env.unwrapped
        space = env.observation_space
        if not (hasattr(base, "grid") and hasattr(base, "agent_pos")) or not isinstance(
            space, spaces.Dict
        ):
            raise ValueError(f"--rnd-full-grid: expected a MiniGrid env, got {env_id!r}")
        shape = (int(base.width), int(base.height), 3)
        self.observation_space = spaces.Dict(
            {**space.spaces, FULL_GRID: spaces.Box(0, 255, shape, np.uint8)}
        )

    def observation(self, observation: dict[str, Any]) -> dict[str, Any]:
        from minigrid.core.constants import COLOR_TO_IDX, OBJECT_TO_IDX

        base = self.env.unwrapped
        grid = base.grid.encode()
        x, y = base.agent_pos
        grid[x, y] = (OBJECT_TO_IDX["agent"], COLOR_TO_IDX["red"], base.agent_dir)
        return {**observation, FULL_GRID: grid.astype(np.uint8, copy=False)}


def policy_spec(spec: ObsSpec) -> ObsSpec:
    """``spec`` without the RND-only leaf: what the policy's network reads."""
    return {k: leaf for k, leaf in spec.items() if k != FULL_GRID}


__all__ = ["FULL_GRID", "FullGridObservation", "policy_spec"]

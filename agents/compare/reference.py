"""The yardsticks of a comparison: the demos' mean return, a uniformly random policy's return
on the final evaluation's seeds, and the default threshold (the env's own, else the demos')."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.compare.records import DemoInfo
from demostudio.episode import find_episodes, read_summary


class RandomPolicy:
    """Uniformly random actions from the env's own (seeded) action space."""

    def __init__(self, seed: int):
        self.seed = seed
        self._seeded = False

    def reset(self, env: Any, observation: Any, info: dict) -> None:
        if not self._seeded:
            env.action_space.seed(self.seed)
            self._seeded = True

    def act(self, env: Any, observation: Any) -> Any:
        return env.action_space.sample()

    def observe_reward(self, reward: float) -> None:
        pass


def random_return(env_id: str, episodes: int, seed: int) -> float:
    """Mean return of :class:`RandomPolicy` over ``episodes`` episodes seeded from ``seed``."""
    from agents.core.evaluate import run_episodes
    from demostudio.episode import make_env

    env = make_env(env_id)
    try:
        return run_episodes(env, RandomPolicy(seed), episodes, seed=seed).mean
    finally:
        env.close()


def demo_info(demos: Sequence[Path]) -> DemoInfo:
    paths = find_episodes(list(demos))
    if not paths:
        raise FileNotFoundError(
            f"--demos: expected episode files (*.h5) under {', '.join(map(str, demos))}, got none"
        )
    return DemoInfo(paths, float(np.mean([read_summary(p).total_return for p in paths])))


def default_threshold(env_id: str, demos: DemoInfo) -> float:
    """The env spec's reward threshold, else the demos' mean return."""
    from demostudio.episode import ensure_registered

    ensure_registered(env_id)
    import gymnasium as gym

    spec_threshold = gym.spec(env_id).reward_threshold
    return float(spec_threshold) if spec_threshold is not None else demos.mean_return


__all__ = ["RandomPolicy", "default_threshold", "demo_info", "random_return"]

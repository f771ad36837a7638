"""Evaluation: play whole episodes with the (near-)greedy policy and report their returns."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import gymnasium as gym
import numpy as np

from agents.core.controller import AgentController


class EvalResult(NamedTuple):
    returns: list[float]
    lengths: list[int]

    @property
    def mean(self) -> float:
        return float(np.mean(self.returns)) if self.returns else float("nan")

    @property
    def success_rate(self) -> float:
        """Share of episodes with a positive return (goal reached in sparse-reward tasks)."""
        return float(np.mean([r > 0 for r in self.returns])) if self.returns else float("nan")


def run_episodes(
    env: gym.Env,
    controller: AgentController,
    episodes: int,
    seed: int | None = None,
    stop: Callable[[list[float]], bool] | None = None,
) -> EvalResult:
    """Play ``episodes`` episodes of ``env`` with ``controller`` (feeding it the rewards);
    ``stop``: asked with the returns so far after each episode, True ends the play."""
    returns, lengths = [], []
    for i in range(episodes):
        obs, info = env.reset(seed=None if seed is None else seed + i)
        controller.reset(env, obs, info)
        total, steps, done = 0.0, 0, False
        while not done:
            obs, reward, terminated, truncated, _ = env.step(controller.act(env, obs))
            controller.observe_reward(float(reward))
            total += float(reward)
            steps += 1
            done = terminated or truncated
        returns.append(total)
        lengths.append(steps)
        if stop is not None and stop(returns):
            break
    return EvalResult(returns, lengths)


__all__ = ["EvalResult", "run_episodes"]

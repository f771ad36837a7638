"""Evaluation: play whole episodes with the (near-)greedy policy and report their returns."""

from __future__ import annotations

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
    stop_below: float | None = None,
) -> EvalResult:
    """Play ``episodes`` episodes of ``env`` with ``controller`` (feeding it the rewards);
    ``stop_below``: stop after the first episode whose return is below it."""
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
        if stop_below is not None and total < stop_below:
            break
    return EvalResult(returns, lengths)


__all__ = ["EvalResult", "run_episodes"]

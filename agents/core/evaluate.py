"""Evaluation: play whole episodes with the (near-)greedy policy and report their returns."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np

from agents.core.controller import AgentController


class Played(NamedTuple):
    """One episode as played: what :func:`agents.core.demos.episode_sequences` cuts into
    sequences, like a recorded one."""

    observations: Any
    """[T+1, ...] (a dict of them for a dict observation space)."""
    actions: np.ndarray
    """[T] int64."""
    rewards: np.ndarray
    """[T] float64."""
    terminations: np.ndarray
    """[T] bool."""

    def __len__(self) -> int:
        return int(self.rewards.shape[0])


def _stack(observations: list[Any]) -> Any:
    if isinstance(observations[0], dict):
        return {k: np.stack([o[k] for o in observations]) for k in observations[0]}
    return np.stack([np.asarray(o) for o in observations])


class EvalResult(NamedTuple):
    returns: list[float]
    lengths: list[int]
    played: list[Played] | None = None
    """The episodes themselves (with ``keep``)."""

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
    keep: bool = False,
) -> EvalResult:
    """Play ``episodes`` episodes of ``env`` with ``controller`` (feeding it the rewards);
    ``stop``: asked with the returns so far after each episode, True ends the play;
    ``keep``: the result holds the episodes played (:class:`Played`)."""
    returns, lengths, played = [], [], []
    for i in range(episodes):
        obs, info = env.reset(seed=None if seed is None else seed + i)
        controller.reset(env, obs, info)
        total, steps, done = 0.0, 0, False
        seen, actions, rewards, ends = [obs], [], [], []
        while not done:
            action = controller.act(env, obs)
            obs, reward, terminated, truncated, _ = env.step(action)
            controller.observe_reward(float(reward))
            total += float(reward)
            steps += 1
            done = terminated or truncated
            if keep:
                seen.append(obs)
                actions.append(action)
                rewards.append(float(reward))
                ends.append(bool(terminated))
        returns.append(total)
        lengths.append(steps)
        if keep:
            arrays = np.asarray(actions, np.int64), np.asarray(rewards), np.asarray(ends, bool)
            played.append(Played(_stack(seen), *arrays))
        if stop is not None and stop(returns):
            break
    return EvalResult(returns, lengths, played if keep else None)


__all__ = ["EvalResult", "Played", "run_episodes"]

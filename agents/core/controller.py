"""A trained agent as a ``demostudio`` Controller: ``reset(env, obs, info)``, ``act(env, obs)``
and ``taken(action)`` (a person took over this step), for ``demostudio watch``, evaluation
and recording the agent's episodes."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from agents.core.policy import BatchPolicy
from agents.core.preprocess import Preprocessor


class AgentController:
    """Plays one episode at a time with a one-env :class:`BatchPolicy`.

    The LSTM is fed the previous action and reward. A Controller is not told rewards, so the
    agent reads them from the recording wrapper's ``episode_return`` when the env has one,
    or from :meth:`observe_reward` when the loop driving it calls that; otherwise it sees 0.
    When a person takes over, the loop still calls :meth:`act` every step (the agent keeps
    observing) and then :meth:`taken` with the executed action, so the LSTM's previous-action
    input follows what really happened and handing control back is seamless.
    """

    def __init__(self, policy: BatchPolicy, preprocess: Preprocessor, name: str = "policy:agent"):
        if policy.n != 1:
            raise ValueError(f"expected a policy over 1 env, got {policy.n}")
        self.name = name
        self.preprocess = preprocess
        self._policy = policy
        self._last_action: int | None = None
        self._pending_reward: float | None = None
        self._return_seen = 0.0

    @property
    def policy(self) -> BatchPolicy:
        """The one-env policy it plays with (its network, selector and LSTM state)."""
        return self._policy

    def reset(self, env: gym.Env, observation: Any, info: dict) -> None:
        self._policy.reset()
        self._last_action = None
        self._pending_reward = None
        self._return_seen = float(getattr(env, "episode_return", 0.0) or 0.0)

    def observe_reward(self, reward: float) -> None:
        """Tell the agent the reward its last action earned."""
        self._pending_reward = float(reward)

    def _last_reward(self, env: gym.Env) -> float:
        if self._pending_reward is not None:
            reward, self._pending_reward = self._pending_reward, None
            return reward
        total = getattr(env, "episode_return", None)
        if total is None:
            return 0.0
        reward, self._return_seen = float(total) - self._return_seen, float(total)
        return reward

    def act(self, env: gym.Env, observation: Any) -> int:
        if self._last_action is not None:
            reward = self._last_reward(env)
            self._policy.observe(np.array([self._last_action]), np.array([reward]))
        batch = {k: v[None] for k, v in self.preprocess.one(observation).items()}
        action = int(self._policy.act(batch).action[0])
        self._last_action = action
        return action

    def taken(self, action: int) -> None:
        """The action executed this step was ``action``, not the one :meth:`act` returned:
        the next step's previous-action input is ``action``."""
        if self._last_action is None:
            raise RuntimeError("taken() before act(): expected act() first in each step")
        self._last_action = int(action)


__all__ = ["AgentController"]

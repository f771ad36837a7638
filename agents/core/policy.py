"""Acting with a recurrent Q network: a batched epsilon-greedy policy for the actors and
evaluation, and :class:`AgentController`, a ``demostudio.controllers.Controller`` that plays
a trained agent (for ``demostudio watch`` and for recording the agent's episodes)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import torch

from agents.core.networks import LSTMState, RecurrentQNetwork
from agents.core.preprocess import Preprocessor


def epsilon_ladder(n: int, base: float = 0.4, alpha: float = 7.0) -> np.ndarray:
    """Ape-X exploration: actor i of n gets ``base ** (1 + alpha * i / (n - 1))``."""
    if n == 1:
        return np.array([base])
    return base ** (1.0 + alpha * np.arange(n) / (n - 1))


class BatchPolicy:
    """Epsilon-greedy over a batch of ``n`` independent episodes, one LSTM step per call."""

    def __init__(
        self,
        network: RecurrentQNetwork,
        preprocess: Preprocessor,
        epsilons: np.ndarray,
        device: torch.device,
        rng: np.random.Generator,
    ):
        self.network = network
        self.preprocess = preprocess
        self.epsilons = np.asarray(epsilons, np.float64)
        self.n = len(self.epsilons)
        self.device = device
        self.rng = rng
        self.state = network.initial_state(self.n, device)
        self.prev_action = np.full(self.n, -1, np.int64)
        self.prev_reward = np.zeros(self.n, np.float32)

    def reset(self, which: np.ndarray | None = None) -> None:
        """Start new episodes in the selected slots (all when None)."""
        sel = np.ones(self.n, bool) if which is None else np.asarray(which, bool)
        if not sel.any():
            return
        keep = torch.from_numpy(~sel).to(self.device).float().unsqueeze(-1)
        self.state = LSTMState(self.state.h * keep, self.state.c * keep)
        self.prev_action[sel] = -1
        self.prev_reward[sel] = 0.0

    def numpy_state(self) -> tuple[np.ndarray, np.ndarray]:
        """The current state (before the next observation), each ``[n, H]``."""
        return self.state.h.cpu().numpy().copy(), self.state.c.cpu().numpy().copy()

    @torch.no_grad()
    def act(self, processed: dict[str, np.ndarray]) -> np.ndarray:
        """Actions for preprocessed observations ``{leaf: [n, ...]}``; advances the state."""
        obs = {
            k: torch.from_numpy(np.ascontiguousarray(v)).to(self.device)[None]
            for k, v in processed.items()
        }
        out = self.network(
            obs,
            torch.from_numpy(self.prev_action).to(self.device)[None],
            torch.from_numpy(self.prev_reward).to(self.device)[None],
            self.state,
        )
        self.state = out.state
        greedy = out.q[0].argmax(dim=-1).cpu().numpy()
        explore = self.rng.random(self.n) < self.epsilons
        random = self.rng.integers(0, self.network.num_actions, self.n)
        return np.where(explore, random, greedy).astype(np.int64)

    def observe(self, action: np.ndarray, reward: np.ndarray) -> None:
        self.prev_action = np.asarray(action, np.int64).copy()
        self.prev_reward = np.asarray(reward, np.float32).copy()


class AgentController:
    """A trained agent as a Controller: ``reset(env, obs, info)`` / ``act(env, obs)``.

    The LSTM is fed the previous reward. A Controller is not told rewards, so the agent
    reads them from the recording wrapper's ``episode_return`` when the env has one, or
    from :meth:`observe_reward` when the loop driving it calls that; otherwise it sees 0.
    """

    def __init__(
        self,
        network: RecurrentQNetwork,
        preprocess: Preprocessor,
        epsilon: float = 0.0,
        device: torch.device | str = "cpu",
        seed: int | None = None,
        name: str = "policy:agent",
    ):
        self.name = name
        self.preprocess = preprocess
        self._policy = BatchPolicy(
            network.eval(),
            preprocess,
            np.array([epsilon]),
            torch.device(device),
            np.random.default_rng(seed),
        )
        self._last_action: int | None = None
        self._pending_reward: float | None = None
        self._return_seen = 0.0

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
        action = int(self._policy.act(batch)[0])
        self._last_action = action
        return action


__all__ = ["AgentController", "BatchPolicy", "epsilon_ladder"]

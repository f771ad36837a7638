"""Acting: a batched recurrent policy returning ``(action, extras)`` per step.

:class:`BatchPolicy` steps ``n`` independent episodes one LSTM step per call, on its OWN
copy of the acting network (never the learner's live module): the learner hands it new
weights with :meth:`BatchPolicy.load_weights` (by version). What it does with the network's
output is a *selector*, chosen by the agent:

* :class:`EpsilonGreedy` (head ``q``, one epsilon per env): R2D2, R2D3, DQfD, SQIL; greedy
  (epsilon 0) on head ``logits`` for BC's evaluation.
* :class:`SoftmaxSample` (head ``logits``): samples a ~ pi and returns extras ``mu`` (pi(a|x)
  of the sampled action) and ``log_prob``, plus any value heads named in ``values``
  (Reactor stores ``mu``; PPO stores ``log_prob`` and ``value_ext``/``value_int``).

Extras are ``{name: [n, ...]}`` arrays; the actor passes each env's slice to its
SequenceWriter, so they arrive in the learner's batch as ``batch.extras[name]`` ``[T, B]``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import NamedTuple, Protocol

import numpy as np
import torch

from agents.core.networks import LSTMState, NetworkOutput, RecurrentNetwork


class PolicyStep(NamedTuple):
    action: np.ndarray
    """``[n]`` int64 actions."""
    extras: dict[str, np.ndarray]
    """``{name: [n, ...]}`` per-step values stored with the step (may be empty)."""


class Selector(Protocol):
    """Turns one network step (heads ``[1, n, ...]``) into actions and extras."""

    def __call__(self, out: NetworkOutput, rng: np.random.Generator) -> PolicyStep: ...


def epsilon_ladder(n: int, base: float = 0.4, alpha: float = 7.0) -> np.ndarray:
    """Ape-X exploration: actor i of n gets ``base ** (1 + alpha * i / (n - 1))``."""
    if n == 1:
        return np.array([base])
    return base ** (1.0 + alpha * np.arange(n) / (n - 1))


class EpsilonGreedy:
    """argmax of ``head`` with probability ``1 - epsilon[i]``, else a uniform action."""

    def __init__(self, epsilons: np.ndarray, head: str = "q"):
        self.epsilons = np.asarray(epsilons, np.float64)
        self.head = head

    def __call__(self, out: NetworkOutput, rng: np.random.Generator) -> PolicyStep:
        scores = out.heads[self.head][0]
        n, num_actions = scores.shape[0], scores.shape[-1]
        greedy = scores.argmax(dim=-1).cpu().numpy()
        explore = rng.random(n) < self.epsilons
        random = rng.integers(0, num_actions, n)
        return PolicyStep(np.where(explore, random, greedy).astype(np.int64), {})

    def part(self, lo: int, hi: int) -> EpsilonGreedy:
        """The selector of envs ``lo:hi`` (actors split over processes keep their epsilon)."""
        return EpsilonGreedy(self.epsilons[lo:hi], self.head)


class SoftmaxSample:
    """a ~ softmax(``head``); extras ``mu`` = pi(a|x), ``log_prob`` = log pi(a|x), and the
    outputs of the heads named in ``values``."""

    def __init__(self, head: str = "logits", values: tuple[str, ...] = ()):
        self.head = head
        self.values = values

    def __call__(self, out: NetworkOutput, rng: np.random.Generator) -> PolicyStep:
        logp = torch.log_softmax(out.heads[self.head][0].double(), dim=-1).cpu().numpy()
        probs = np.exp(logp)
        u = rng.random(len(probs))[:, None]
        action = np.minimum((probs.cumsum(-1) < u).sum(-1), probs.shape[-1] - 1)
        taken = logp[np.arange(len(action)), action]
        extras = {"mu": np.exp(taken).astype(np.float32), "log_prob": taken.astype(np.float32)}
        for name in self.values:
            extras[name] = out.heads[name][0].cpu().numpy().astype(np.float32)
        return PolicyStep(action.astype(np.int64), extras)

    def part(self, lo: int, hi: int) -> SoftmaxSample:
        return self


def selector_part(selector: Selector, lo: int, hi: int) -> Selector | None:
    """The part of ``selector`` for envs ``lo:hi`` of its ``n``, or None when the selector
    cannot be split (no ``part`` method: build one for ``hi - lo`` envs instead)."""
    part = getattr(selector, "part", None)
    return None if part is None else part(lo, hi)


class BatchPolicy:
    """``n`` independent episodes, one LSTM step per :meth:`act`, on its own network copy."""

    def __init__(
        self,
        network: RecurrentNetwork,
        selector: Selector,
        n: int,
        device: torch.device,
        rng: np.random.Generator,
    ):
        self.network = network.to(device)
        self.selector = selector
        self.n = n
        self.device = device
        self.rng = rng
        self.version = -1
        """Learner updates of the weights loaded last (-1: as built)."""
        self.state = network.initial_state(n, device)
        self.prev_action = np.full(n, -1, np.int64)
        self.prev_reward = np.zeros(n, np.float32)

    @staticmethod
    def copy_of(
        network: RecurrentNetwork,
        selector: Selector,
        n: int,
        device: torch.device,
        rng: np.random.Generator,
    ) -> BatchPolicy:
        """A policy on a copy of ``network`` (its own module: the learner's live one is
        never shared; copying draws nothing from torch's random generator)."""
        clone = copy.deepcopy(network).to(device).requires_grad_(False)
        return BatchPolicy(clone, selector, n, device, rng)

    def load_weights(self, weights: Mapping[str, torch.Tensor], version: int) -> None:
        self.network.load_state_dict(weights)
        self.version = version

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
    def step_network(self, processed: dict[str, np.ndarray]) -> NetworkOutput:
        """Advance the state on preprocessed observations ``{leaf: [n, ...]}``."""
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
        return out

    @torch.no_grad()
    def act(self, processed: dict[str, np.ndarray]) -> PolicyStep:
        """Actions and extras for ``{leaf: [n, ...]}``; advances the state."""
        return self.selector(self.step_network(processed), self.rng)

    def observe(self, action: np.ndarray, reward: np.ndarray) -> None:
        """The actions executed and their rewards (the next step's LSTM inputs)."""
        self.prev_action = np.asarray(action, np.int64).copy()
        self.prev_reward = np.asarray(reward, np.float32).copy()


__all__ = [
    "BatchPolicy",
    "EpsilonGreedy",
    "PolicyStep",
    "Selector",
    "SoftmaxSample",
    "epsilon_ladder",
    "selector_part",
]

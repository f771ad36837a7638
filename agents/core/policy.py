"""Acting: a batched recurrent policy returning ``(action, extras)`` per step.

:class:`BatchPolicy` steps ``n`` independent episodes one LSTM step per call, on its OWN
copy of the acting network (never the learner's live module): the learner hands it new
weights with :meth:`BatchPolicy.load_weights` (by version). What it does with the network's
output is a *selector*, chosen by the agent:

* :class:`EpsilonGreedy` (head ``q``, one epsilon per env): R2D2, R2D3, DQfD, SQIL; greedy
  (epsilon 0) on head ``logits`` for BC's evaluation.
* :class:`SoftmaxSample` (head ``logits``, one epsilon per env): every actor-critic's
  behaviour policy, a sample from the policy mixed with a uniform action,
  ``mu = (1 - epsilon) * softmax(logits) + epsilon / A``, storing what its learner needs
  of mu (Reactor: ``mu`` and with TIS the whole ``behaviour``; PPO and RND-PPO:
  ``log_prob``, the value heads and the env index).

Extras are ``{name: [n, ...]}`` arrays; the actor passes each env's slice to its
SequenceWriter, so they arrive in the learner's batch as ``batch.extras[name]`` ``[T, B]``.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from typing import Literal, NamedTuple, Protocol

import numpy as np
import torch

from agents.core.networks import LSTMState, NetworkOutput, RecurrentNetwork
from agents.core.numpy_step import NumpyStep


class PolicyStep(NamedTuple):
    action: np.ndarray
    """``[n]`` int64 actions."""
    extras: dict[str, np.ndarray]
    """``{name: [n, ...]}`` per-step values stored with the step (may be empty)."""


class Selector(Protocol):
    """Turns one network step (heads ``[1, n, ...]``) into actions and extras. A selector
    may also have ``select_numpy(heads, rng)`` taking numpy heads ``[n, ...]``: the policy
    then hands it the numpy acting step's output as it is (no tensors made per step)."""

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
        return self.select_numpy({self.head: out.heads[self.head][0].cpu().numpy()}, rng)

    def select_numpy(self, heads: Mapping[str, np.ndarray], rng: np.random.Generator) -> PolicyStep:
        """The same from numpy heads ``[n, ...]`` (the numpy acting step's; equal to torch's
        argmax, which also takes the first of equal maxima)."""
        scores = heads[self.head]
        n, num_actions = scores.shape[0], scores.shape[-1]
        if n == 1:  # scalar draws take the same numbers from the generator, at a third the cost
            explore_one = rng.random() < self.epsilons[0]
            random_one = rng.integers(0, num_actions)
            pick = random_one if explore_one else scores[0].argmax()
            return PolicyStep(np.array([pick], np.int64), {})
        greedy = scores.argmax(axis=-1)
        explore = rng.random(n) < self.epsilons
        random = rng.integers(0, num_actions, n)
        return PolicyStep(np.where(explore, random, greedy).astype(np.int64), {})

    def part(self, lo: int, hi: int) -> EpsilonGreedy:
        """The selector of envs ``lo:hi`` (actors split over processes keep their epsilon)."""
        return EpsilonGreedy(self.epsilons[lo:hi], self.head)


def mixture_log_probs(logits: torch.Tensor, epsilon: float | torch.Tensor) -> torch.Tensor:
    """``[..., A]`` policy logits -> ``[..., A]`` log mu of the epsilon mixture
    ``mu = (1 - epsilon) * softmax(logits) + epsilon / A``, in log space (a log-probability
    stays exact where mu is tiny). ``epsilon``: a number, or a tensor broadcasting against
    ``logits`` (``[n, 1]``: one per env)."""
    if isinstance(epsilon, torch.Tensor):
        eps = epsilon.to(logits.dtype).to(logits.device)
        if bool((eps < 0.0).any()) or bool((eps > 1.0).any()):
            raise ValueError(f"expected epsilon in [0, 1], got {epsilon}")
        log_pi = torch.log_softmax(logits, dim=-1)
        return torch.logaddexp(log_pi + torch.log1p(-eps), torch.log(eps / logits.shape[-1]))
    if not 0.0 <= epsilon <= 1.0:
        raise ValueError(f"expected epsilon in [0, 1], got {epsilon}")
    log_pi = torch.log_softmax(logits, dim=-1)
    if epsilon == 0.0:
        return log_pi
    uniform = torch.full_like(log_pi, math.log(epsilon / logits.shape[-1]))
    if epsilon == 1.0:
        return uniform
    return torch.logaddexp(log_pi + math.log1p(-epsilon), uniform)


Stored = Literal["mu", "log_prob", "behaviour"]
"""What :class:`SoftmaxSample` stores of the behaviour: ``mu`` = mu(a|x) ``[n]``,
``log_prob`` = log mu(a|x) ``[n]``, ``behaviour`` = mu(.|x) ``[n, A]``."""


class SoftmaxSample:
    """a ~ mu = (1 - epsilon_i) * softmax(``head``) + epsilon_i / A for env ``i``; extras:
    what ``store`` names of mu, the outputs of the heads named in ``values``, and with
    ``env_index`` each env's index in the whole actor pool (``env``; an on-policy rollout
    follows each env's stream through its segments)."""

    def __init__(
        self,
        head: str = "logits",
        epsilons: float | Sequence[float] | np.ndarray = 0.0,
        store: tuple[Stored, ...] = ("mu", "log_prob"),
        values: tuple[str, ...] = (),
        env_index: np.ndarray | None = None,
    ):
        self.head = head
        self.epsilons = np.asarray(epsilons, np.float64)
        self.store = store
        self.values = values
        self.env_index = None if env_index is None else np.asarray(env_index, np.float32)

    def _epsilon(self) -> float | torch.Tensor:
        """One number when every env has the same epsilon, else ``[n, 1]``."""
        flat = self.epsilons.reshape(-1)
        if flat.size == 1 or (flat == flat[0]).all():
            return float(flat[0])
        return torch.from_numpy(flat).unsqueeze(-1)

    def __call__(self, out: NetworkOutput, rng: np.random.Generator) -> PolicyStep:
        logits = out.heads[self.head][0].double()
        log_mu = mixture_log_probs(logits, self._epsilon()).cpu().numpy()
        probs = np.exp(log_mu)
        u = rng.random(len(probs))[:, None]
        action = np.minimum((probs.cumsum(-1) < u).sum(-1), probs.shape[-1] - 1)
        rows = np.arange(len(action))
        extras = {}
        for name in self.store:
            if name == "mu":
                extras[name] = probs[rows, action].astype(np.float32)
            elif name == "log_prob":
                extras[name] = log_mu[rows, action].astype(np.float32)
            else:
                extras[name] = probs.astype(np.float32)
        if self.env_index is not None:
            extras["env"] = self.env_index.copy()
        for name in self.values:
            extras[name] = out.heads[name][0].cpu().numpy().astype(np.float32)
        return PolicyStep(action.astype(np.int64), extras)

    def part(self, lo: int, hi: int) -> SoftmaxSample:
        """The selector of envs ``lo:hi`` (an actor process's): their epsilons, and their
        pool-wide env indices."""
        eps = self.epsilons if self.epsilons.ndim == 0 else self.epsilons[lo:hi]
        index = None if self.env_index is None else self.env_index[lo:hi]
        return SoftmaxSample(self.head, eps, self.store, self.values, index)


def selector_part(selector: Selector, lo: int, hi: int) -> Selector | None:
    """The part of ``selector`` for envs ``lo:hi`` of its ``n``, or None when the selector
    cannot be split (no ``part`` method: build one for ``hi - lo`` envs instead)."""
    part = getattr(selector, "part", None)
    return None if part is None else part(lo, hi)


class BatchPolicy:
    """``n`` independent episodes, one LSTM step per :meth:`act`, on its own network copy.

    On the CPU the recurrent state is kept in numpy arrays and, where the network's numpy
    step covers it (:mod:`agents.core.numpy_step`), a step makes no tensor at all: per-step
    tensor conversions and module calls would cost more than the small network's arithmetic.
    """

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
        self._select_numpy = getattr(selector, "select_numpy", None)
        self.n = n
        self.device = device
        self.rng = rng
        self.version = -1
        """Learner updates of the weights loaded last (-1: as built)."""
        self._on_cpu = torch.device(device).type == "cpu"
        self._step_cache: tuple[torch.Tensor, int, NumpyStep | None] | None = None
        self._state: LSTMState | None = None
        self._h = self._c = np.zeros(0, np.float32)
        self.state = network.initial_state(n, device)
        self.prev_action = np.full(n, -1, np.int64)
        self.prev_reward = np.zeros(n, np.float32)

    @property
    def state(self) -> LSTMState:
        """The recurrent state as tensors on the policy's device (on the CPU, views of the
        numpy arrays the policy keeps)."""
        if self._on_cpu:
            return LSTMState(torch.from_numpy(self._h), torch.from_numpy(self._c))
        assert self._state is not None
        return self._state

    @state.setter
    def state(self, value: LSTMState) -> None:
        if self._on_cpu:  # arrays the policy replaces and never writes in place
            self._h, self._c = value.h.numpy(), value.c.numpy()
        else:
            self._state = value

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
        self._step_cache = None

    def reset(self, which: np.ndarray | None = None) -> None:
        """Start new episodes in the selected slots (all when None)."""
        sel = np.ones(self.n, bool) if which is None else np.asarray(which, bool)
        if not sel.any():
            return
        if self._on_cpu:
            keep = (~sel).astype(np.float32)[:, None]
            self._h, self._c = self._h * keep, self._c * keep
        else:
            keep = torch.from_numpy(~sel).to(self.device).float().unsqueeze(-1)
            state = self.state
            self._state = LSTMState(state.h * keep, state.c * keep)
        self.prev_action[sel] = -1
        self.prev_reward[sel] = 0.0

    def numpy_state(self) -> tuple[np.ndarray, np.ndarray]:
        """The current state (before the next observation), each ``[n, H]``, read-only (the
        policy replaces its arrays rather than writing them: no copy is needed)."""
        if not self._on_cpu:
            state = self.state
            return state.h.cpu().numpy().copy(), state.c.cpu().numpy().copy()
        h, c = self._h.view(), self._c.view()
        h.flags.writeable = c.flags.writeable = False
        return h, c

    def _numpy_heads(self, processed: dict[str, np.ndarray]) -> dict[str, np.ndarray] | None:
        """Advance the state by the network's numpy step and return its heads ``[n, ...]``;
        None (nothing done) where that step does not cover this network or batch, as the
        network's own forward decides."""
        if not self._on_cpu:
            return None
        step = self._current_numpy_step()
        if step is None or not step.fits(self.n) or not step.accepts(processed):
            return None
        heads, self._h, self._c = step(
            processed, self.prev_action, self.prev_reward, self._h, self._c
        )
        return heads

    def _current_numpy_step(self) -> NumpyStep | None:
        """The network's numpy step, looked up again when its first tensor has moved (the
        network's full check of every tensor costs a few microseconds a step; ``.to()`` and
        ``share_memory_()`` move them all, :meth:`load_weights` looks it up anew)."""
        cached = self._step_cache
        if cached is None or cached[0].data_ptr() != cached[1]:
            first = next(iter(self.network.state_dict(keep_vars=True).values()))
            cached = self._step_cache = (first, first.data_ptr(), self.network.numpy_step())
        return cached[2]

    def _output(self, heads: dict[str, np.ndarray]) -> NetworkOutput:
        return NetworkOutput({k: torch.from_numpy(v[None]) for k, v in heads.items()}, self.state)

    @torch.no_grad()
    def _torch_step(self, processed: dict[str, np.ndarray]) -> NetworkOutput:
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

    def step_network(self, processed: dict[str, np.ndarray]) -> NetworkOutput:
        """Advance the state on preprocessed observations ``{leaf: [n, ...]}``."""
        heads = self._numpy_heads(processed)
        return self._torch_step(processed) if heads is None else self._output(heads)

    def act(self, processed: dict[str, np.ndarray]) -> PolicyStep:
        """Actions and extras for ``{leaf: [n, ...]}``; advances the state."""
        heads = self._numpy_heads(processed)
        if heads is None:
            out = self._torch_step(processed)
        elif self._select_numpy is not None:
            return self._select_numpy(heads, self.rng)
        else:
            out = self._output(heads)
        with torch.no_grad():
            return self.selector(out, self.rng)

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
    "Stored",
    "epsilon_ladder",
    "mixture_log_probs",
    "selector_part",
]

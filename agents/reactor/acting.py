"""The Reactor's acting policy and the behaviour probabilities stored with every step.

The actor samples from ``mu = (1 - eps) * pi + eps / A`` (the policy mixed with a uniform
distribution, Gruslys et al. 2018 section 3.4.1) and stores ``mu(.|x)`` as a per-step extra:
``mu(a_t|x_t)`` feeds the Retrace traces and beta, the whole ``mu(.|x_t)`` ACER's TIS.
With ``--option-epsilon`` the actors also hold uniformly drawn actions for a few steps now
and then (:class:`HeldOptions`), and mu is that behaviour's. A demo step has no behaviour
policy to query; it is stored as ``mu = one_hot(a_t)``, i.e.
``mu(a_t|x_t) = 1`` (see :func:`demo_behaviour` and :func:`demo_extras`).

Extras (per step, see :mod:`agents.core.sequences`): ``mu`` ``[T]`` = ``mu(a_t|x_t)``, and
with ``full`` (the TIS policy gradient) ``behaviour`` ``[T, A]`` = ``mu(.|x_t)``.
"""

from __future__ import annotations

import numpy as np
import torch

from agents.core.networks import NetworkOutput
from agents.core.policy import PolicyStep

MU = "mu"
"""Extra: behaviour probability of the taken action, ``[T]``."""
BEHAVIOUR = "behaviour"
"""Extra: the whole behaviour distribution, ``[T, A]`` (stored only for TIS)."""


def behaviour_probs(logits: torch.Tensor, epsilon: float | torch.Tensor) -> torch.Tensor:
    """``mu = (1 - epsilon) * softmax(logits) + epsilon / A`` over the last axis (``epsilon``:
    a number, or a tensor broadcasting against ``logits``, e.g. ``[n, 1]`` per env)."""
    eps = torch.as_tensor(epsilon, dtype=logits.dtype, device=logits.device)
    if bool((eps < 0.0).any()) or bool((eps > 1.0).any()):
        raise ValueError(f"expected epsilon in [0, 1], got {epsilon}")
    return (1.0 - eps) * torch.softmax(logits, -1) + eps / logits.shape[-1]


def demo_behaviour(action: torch.Tensor, num_actions: int) -> torch.Tensor:
    """The behaviour distribution of demo steps: one-hot on the recorded action,
    ``[..., A]`` float (so ``mu(a|x) = 1`` for the recorded ``a``)."""
    return torch.nn.functional.one_hot(action.long(), num_actions).float()


def demo_extras(actions: np.ndarray, num_actions: int, full: bool) -> dict[str, np.ndarray]:
    """The extras of a recorded episode's steps (``actions``: ``[T]``): ``mu`` = 1 and, with
    ``full``, ``behaviour`` = one-hot of the recorded action."""
    actions = np.asarray(actions, np.int64)
    out = {MU: np.ones(len(actions), np.float32)}
    if full:
        out[BEHAVIOUR] = np.eye(num_actions, dtype=np.float32)[actions]
    return out


class BehaviourSample:
    """The Reactor's acting selector (a core ``Selector``): ``a ~ mu = (1 - eps_i) pi + eps_i / A``
    for env ``i`` (``epsilons`` ``[n]``), ``pi = softmax(head)``; extras ``mu`` (and
    ``behaviour`` with ``full``)."""

    def __init__(self, epsilons: np.ndarray, head: str = "logits", full: bool = False):
        self.epsilons = torch.as_tensor(np.asarray(epsilons, np.float64)).unsqueeze(-1)
        self.head = head
        self.full = full

    def probs(self, out: NetworkOutput) -> np.ndarray:
        """``mu(.|x)`` of every env, ``[n, A]`` float64."""
        logits = out.heads[self.head][0].double().cpu()
        return behaviour_probs(logits, self.epsilons).numpy()

    def __call__(self, out: NetworkOutput, rng: np.random.Generator) -> PolicyStep:
        mu = self.probs(out)
        action = sample_rows(mu, rng.random(len(mu)))
        return behaviour_step(action, mu, self.full)


class HeldOptions:
    """Temporally extended exploration on top of :class:`BehaviourSample` (Dabney, Ostrovski
    and Barreto 2021, "ez-greedy"): at a step outside an option, env ``i`` starts one with
    probability ``epsilon``: a uniformly drawn action, held for ``n ~ zeta(exponent)`` steps
    (at most ``max_steps``), the first of them included. A single random action is undone
    by the next few of a balancing policy; one held for a few steps carries the agent into
    states its own policy never visits (CartPole: the cart far from the centre), so the
    critic learns their values before the policy drifts there.

    The option is part of the behaviour policy's state, so the stored mu is exact::

        outside an option   mu'(a|x) = epsilon / A + (1 - epsilon) mu(a|x)
                            (started or not: the option's first action is uniform)
        held steps          mu'(a|x) = 1 for the held action, 0 for the others

    (``behaviour`` with ``full``: those rows). Retrace's traces and beta-LOO read mu' as any
    behaviour's: a held action the policy would rarely take cuts the trace, c = lambda pi(a|x).
    An option ends with its episode (:meth:`reset`)."""

    def __init__(self, sample: BehaviourSample, epsilon: float, exponent: float, max_steps: int):
        if not 0.0 <= epsilon <= 1.0 or exponent <= 1.0 or max_steps < 1:
            raise ValueError(
                f"expected epsilon in [0, 1], exponent > 1 and max_steps >= 1, got "
                f"{epsilon}, {exponent}, {max_steps}"
            )
        self.sample = sample
        self.epsilon, self.exponent, self.max_steps = epsilon, exponent, max_steps
        self.left = np.zeros(0, np.int64)
        """Steps each env's option still holds its action (0: outside an option)."""
        self.held = np.zeros(0, np.int64)

    def reset(self, which: np.ndarray) -> None:
        """New episodes in the ``which`` slots: their options end."""
        if len(self.left):
            self.left[np.asarray(which, bool)] = 0

    def __call__(self, out: NetworkOutput, rng: np.random.Generator) -> PolicyStep:
        mu = self.sample.probs(out)
        n, num_actions = mu.shape
        if len(self.left) != n:
            self.left, self.held = np.zeros(n, np.int64), np.zeros(n, np.int64)
        free = self.left == 0
        start = free & (rng.random(n) < self.epsilon)
        uniform = rng.integers(0, num_actions, n)
        duration = np.minimum(rng.zipf(self.exponent, n), self.max_steps)
        own = sample_rows(mu, rng.random(n))
        action = np.where(free, np.where(start, uniform, own), self.held)
        behaviour = np.where(
            free[:, None],
            self.epsilon / num_actions + (1.0 - self.epsilon) * mu,
            np.eye(num_actions)[self.held],
        )
        self.left = np.where(free, np.where(start, duration - 1, 0), self.left - 1)
        self.held = np.where(start, uniform, self.held)
        return behaviour_step(action, behaviour, self.sample.full)


def sample_rows(probs: np.ndarray, u: np.ndarray) -> np.ndarray:
    """One index per row of ``probs`` ``[n, A]`` by inverse CDF of uniforms ``u`` ``[n]``."""
    return np.minimum((probs.cumsum(-1) < u[:, None]).sum(-1), probs.shape[-1] - 1)


def behaviour_step(action: np.ndarray, mu: np.ndarray, full: bool) -> PolicyStep:
    """The step of ``action`` drawn from ``mu`` ``[n, A]``: extras ``mu`` (and ``behaviour``)."""
    extras = {MU: mu[np.arange(len(action)), action].astype(np.float32)}
    if full:
        extras[BEHAVIOUR] = mu.astype(np.float32)
    return PolicyStep(action.astype(np.int64), extras)


__all__ = [
    "BEHAVIOUR",
    "MU",
    "BehaviourSample",
    "HeldOptions",
    "behaviour_probs",
    "demo_behaviour",
    "demo_extras",
]

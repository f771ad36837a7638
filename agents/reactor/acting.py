"""The Reactor's acting policy and the behaviour probabilities stored with every step.

The actor samples from ``mu = (1 - eps) * pi + eps / A`` (the policy mixed with a uniform
distribution, Gruslys et al. 2018 section 3.4.1) and stores ``mu(.|x)`` as a per-step extra:
``mu(a_t|x_t)`` feeds the Retrace traces and beta, the whole ``mu(.|x_t)`` ACER's TIS.
A demo step has no behaviour policy to query; it is stored as ``mu = one_hot(a_t)``, i.e.
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

    def __call__(self, out: NetworkOutput, rng: np.random.Generator) -> PolicyStep:
        logits = out.heads[self.head][0].double().cpu()
        mu = behaviour_probs(logits, self.epsilons).numpy()
        u = rng.random(len(mu))[:, None]
        action = np.minimum((mu.cumsum(-1) < u).sum(-1), mu.shape[-1] - 1)
        extras = {MU: mu[np.arange(len(action)), action].astype(np.float32)}
        if self.full:
            extras[BEHAVIOUR] = mu.astype(np.float32)
        return PolicyStep(action.astype(np.int64), extras)


__all__ = [
    "BEHAVIOUR",
    "MU",
    "BehaviourSample",
    "behaviour_probs",
    "demo_behaviour",
    "demo_extras",
]

"""The behaviour probabilities the Reactor stores with every step.

The actor samples from ``mu = (1 - eps) * pi + eps / A`` (the policy mixed with a uniform
distribution, Gruslys et al. 2018 section 3.4.1; the core's
:class:`agents.core.policy.SoftmaxSample`) and stores ``mu(.|x)`` as a per-step extra:
``mu(a_t|x_t)`` feeds the Retrace traces and beta, the whole ``mu(.|x_t)`` ACER's TIS.
A demo step has no behaviour policy to query; it is stored as ``mu = one_hot(a_t)``, i.e.
``mu(a_t|x_t) = 1`` (see :func:`demo_behaviour` and :func:`demo_extras`).

Extras (per step, see :mod:`agents.core.sequences`): ``mu`` ``[T]`` = ``mu(a_t|x_t)``, and
with ``full`` (the TIS policy gradient) ``behaviour`` ``[T, A]`` = ``mu(.|x_t)``.
"""

from __future__ import annotations

import numpy as np
import torch

MU = "mu"
"""Extra: behaviour probability of the taken action, ``[T]``."""
BEHAVIOUR = "behaviour"
"""Extra: the whole behaviour distribution, ``[T, A]`` (stored only for TIS)."""


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


__all__ = [
    "BEHAVIOUR",
    "MU",
    "demo_behaviour",
    "demo_extras",
]

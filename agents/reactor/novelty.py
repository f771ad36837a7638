"""The novelty cost (``--novelty-cost k``): a reward that makes the critic averse to states
unlike those it has learned from, so that a policy which has reached the task's goal keeps
to the states it knows.

Why (CartPole-v1, benchmarks/results/reactor-cartpole-ablation-40k/results.md, sessions
19-20): once the policy balances the pole, its own episodes stop ending, the critic values
every state it sees at about the same return and nothing tells it where the track ends;
the policy then drifts into states it has not learned from, and the evaluation dips. The
novelty cost is the opposite of an exploration bonus: the core's RND networks
(:mod:`agents.core.rnd`) learn on every replayed batch, and a step whose next observation
the predictor does not know yet is charged::

    e_t      = e(x_{t+1})          RND prediction error of the next observation, normalised by
                                   running mean and std of replayed observations, clip +-5
    ebar     <- 0.99 ebar + 0.01 mean(e over the batch's real observations)
    r'_t     = r_t - k * clip(e_t / ebar - 1, 0, cap)

Only errors above the running mean cost anything (the usual states cost 0), at most
``k * cap`` per step. The last step of a stored sequence has no next observation in it and
costs 0 (it is only ever a bootstrap step). Demo steps pay the same cost. The predictor's
loss (the mean of e over every real observation of the batch, and the observation after
each sequence's last real step) is added to the learner's loss: its parameters are their own
Adam group (``--novelty-lr``, eps 1e-8) and share the learner's gradient-norm clipping; the
target network never trains. The normaliser's statistics and ``ebar`` go into checkpoints
with the agent's state, the networks with the learner's (``novelty_target``,
``novelty_predictor``).

Observations: a single leaf of stacked frames goes through RND's convolutional networks;
otherwise every leaf (the preprocessed network input) is flattened and concatenated.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
import torch
from torch import nn

from agents.core.preprocess import ObsSpec
from agents.core.rnd import RND, is_image_shape
from agents.core.running_stats import ObservationNormalizer

EBAR_DECAY = 0.99
"""Decay of the running mean of the prediction error (``ebar``)."""
OBS_CLIP = 5.0
"""Clip of the normalised observations (as RND's)."""
ADAM_EPS = 1e-8
"""The predictor's Adam epsilon (the learner's default, 1e-3, stalls its small gradients)."""


def novelty_input(obs: Mapping[str, torch.Tensor], spec: ObsSpec) -> torch.Tensor:
    """``{leaf: [T, B, *shape]}`` -> ``[T, B, *input_shape]``: a single image leaf as it is,
    else every leaf flattened (in sorted order) and concatenated, as float."""
    names = sorted(spec)
    if len(names) == 1 and is_image_shape(spec[names[0]].shape):
        return obs[names[0]].float()
    return torch.cat([obs[k].float().reshape(*obs[k].shape[:2], -1) for k in names], dim=-1)


def input_shape(spec: ObsSpec) -> tuple[int, ...]:
    """The shape of :func:`novelty_input`'s per-step input."""
    names = sorted(spec)
    if len(names) == 1 and is_image_shape(spec[names[0]].shape):
        return tuple(spec[names[0]].shape)
    return (sum(max(int(np.prod(spec[k].shape)), 1) for k in names),)


class NoveltyTerms(NamedTuple):
    cost: torch.Tensor
    """``[T, B]`` the cost of each step (no gradient), 0 on the last step."""
    loss: torch.Tensor
    """The predictor's loss (scalar, gradient into the predictor only)."""
    metrics: dict[str, float]


class NoveltyCost:
    """The RND networks, the observation normaliser and ``ebar``; :meth:`__call__` gives a
    batch's costs and the predictor's loss (see the module docstring)."""

    def __init__(self, spec: ObsSpec, weight: float, cap: float, hidden: int, embed: int):
        self.spec = dict(spec)
        self.weight = float(weight)
        self.cap = float(cap)
        shape = input_shape(spec)
        self.rnd = RND(shape, embed, hidden)
        self.obs_norm = ObservationNormalizer(shape, OBS_CLIP)
        self.ebar: float | None = None

    @property
    def networks(self) -> dict[str, nn.Module]:
        """The learner's networks for the cost: the frozen target, the trained predictor."""
        return {"novelty_target": self.rnd.target, "novelty_predictor": self.rnd.predictor}

    def __call__(self, obs: Mapping[str, torch.Tensor], mask: torch.Tensor) -> NoveltyTerms:
        """``obs``: ``{leaf: [T, B, ...]}``; ``mask``: ``[T, B]`` the real steps."""
        x = novelty_input(obs, self.spec)
        seen = mask.bool().clone()
        seen[1:] |= mask[:-1].bool()  # the observation after each real step
        self.obs_norm.update(x[seen])
        t, b = x.shape[:2]
        err = self.rnd.prediction_error(self.obs_norm(x.reshape(t * b, *x.shape[2:])))
        err = err.reshape(t, b)
        loss = err[seen].mean() if bool(seen.any()) else err.sum() * 0.0
        e = err.detach()
        if bool(seen.any()):
            mean = float(e[seen].mean())
            old = mean if self.ebar is None else self.ebar
            self.ebar = EBAR_DECAY * old + (1 - EBAR_DECAY) * mean
        cost = torch.zeros_like(e)
        if self.ebar is not None and self.ebar > 0:
            cost[:-1] = self.weight * (e[1:] / self.ebar - 1.0).clamp(0.0, self.cap)
        real = mask.bool()
        metrics = {
            "novelty_error": float(e[seen].mean()) if bool(seen.any()) else 0.0,
            "novelty_cost": float(cost[real].mean()) if bool(real.any()) else 0.0,
        }
        return NoveltyTerms(cost, loss, metrics)

    def state_dict(self) -> dict[str, Any]:
        return {"obs_norm": self.obs_norm.state_dict(), "ebar": self.ebar}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Raises ValueError naming the key on a malformed state (read as hostile input)."""
        if not isinstance(state, Mapping) or "obs_norm" not in state or "ebar" not in state:
            got = sorted(state) if isinstance(state, Mapping) else type(state).__name__
            raise ValueError(f"novelty: expected keys 'obs_norm' and 'ebar', got {got}")
        ebar = state["ebar"]
        if ebar is not None and (
            isinstance(ebar, bool)
            or not isinstance(ebar, (int, float))
            or not (math.isfinite(ebar) and ebar >= 0)
        ):
            raise ValueError(f"novelty: expected ebar a number >= 0 or null, got {ebar!r}")
        self.obs_norm.load_state_dict(state["obs_norm"])
        self.ebar = None if ebar is None else float(ebar)


__all__ = ["NoveltyCost", "NoveltyTerms", "input_shape", "novelty_input"]

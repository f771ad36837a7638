"""Epsilon-greedy on top of a stochastic policy: with probability epsilon a uniformly random
action, otherwise the policy's sample. The behaviour is the mixture

    mu(a|s) = (1 - epsilon) * pi(a|s) + epsilon / A

and its log-probability is what a rollout stores as the "old" log-probability, so PPO's
ratio pi_new / mu stays correct when epsilon > 0 (with epsilon = 0, mu = pi).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch


class BehaviourSample(NamedTuple):
    action: torch.Tensor
    """``[N]`` int64 sampled actions."""
    log_prob: torch.Tensor
    """``[N]`` log mu(action | s) under the epsilon mixture."""


def mixture_log_probs(logits: torch.Tensor, epsilon: float) -> torch.Tensor:
    """``[..., A]`` policy logits -> ``[..., A]`` log mu of the epsilon mixture."""
    if not 0.0 <= epsilon <= 1.0:
        raise ValueError(f"expected epsilon in [0, 1], got {epsilon}")
    log_pi = torch.log_softmax(logits, dim=-1)
    if epsilon == 0.0:
        return log_pi
    n = logits.shape[-1]
    uniform = torch.full_like(log_pi, math.log(epsilon / n))
    if epsilon == 1.0:
        return uniform
    return torch.logaddexp(log_pi + math.log1p(-epsilon), uniform)


def sample_behaviour(
    logits: torch.Tensor, epsilon: float, generator: torch.Generator | None = None
) -> BehaviourSample:
    """Sample ``[N]`` actions from the epsilon mixture over ``[N, A]`` logits."""
    log_mu = mixture_log_probs(logits, epsilon)
    action = torch.multinomial(log_mu.exp(), 1, generator=generator).squeeze(-1)
    return BehaviourSample(action, log_mu.gather(-1, action.unsqueeze(-1)).squeeze(-1))


__all__ = ["BehaviourSample", "mixture_log_probs", "sample_behaviour"]

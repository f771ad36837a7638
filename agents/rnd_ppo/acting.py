"""The on-policy actor-critic's policy head and what its actors store: they sample from the
epsilon mixture over the policy's logits (the core's
:class:`agents.core.policy.SoftmaxSample`, ``--epsilon-greedy``; with epsilon 0 it is the
policy itself), storing per step:

* ``log_prob``: log mu(a|s) of the behaviour (the mixture), PPO's "old" log-probability, so
  the ratio pi_new / mu stays right when epsilon > 0;
* ``value_ext`` / ``value_int``: the value heads at the observation;
* ``env``: the index of the environment that took the step, so the rollout can follow each
  environment's stream through its segments (the intrinsic return runs on across them).
"""

from __future__ import annotations

import torch

LOGITS = "logits"
"""The policy head."""


def policy_terms(logits: torch.Tensor, action: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``[T, B, A]`` logits and ``[T, B]`` actions -> (log pi(a|s), entropy), each ``[T, B]``."""
    log_pi = torch.log_softmax(logits, dim=-1)
    log_prob = log_pi.gather(-1, action.long().clamp(min=0).unsqueeze(-1)).squeeze(-1)
    entropy = -(log_pi.exp() * log_pi).sum(-1)
    return log_prob, entropy


__all__ = ["LOGITS", "policy_terms"]

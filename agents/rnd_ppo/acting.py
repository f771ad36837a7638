"""RND-PPO's acting policy: a sample from the epsilon mixture over the policy's logits
(:mod:`agents.rnd_ppo.exploration`), with the extras the rollout needs stored per step:

* ``log_prob``: log mu(a|s) of the behaviour (the mixture), PPO's "old" log-probability;
* ``value_ext`` / ``value_int``: the value heads at the observation;
* ``env``: the index of the environment that took the step, so the rollout can follow each
  environment's stream through its segments (the intrinsic return runs on across them).
"""

from __future__ import annotations

import numpy as np
import torch

from agents.core.networks import NetworkOutput
from agents.core.policy import PolicyStep
from agents.rnd_ppo.exploration import mixture_log_probs

LOGITS = "logits"
"""The policy head."""


class BehaviourSample:
    """a ~ (1 - epsilon) * pi(.|s) + epsilon * uniform, over ``n`` envs."""

    def __init__(self, n: int, epsilon: float, values: tuple[str, ...], first: int = 0):
        self.env_index = np.arange(first, first + n, dtype=np.float32)
        self.epsilon = float(epsilon)
        self.values = values

    def part(self, lo: int, hi: int) -> BehaviourSample:
        """The selector of envs ``lo:hi`` (an actor process's), keeping their pool-wide
        indices so the rollout follows each env's stream."""
        first = int(self.env_index[0]) + lo
        return BehaviourSample(hi - lo, self.epsilon, self.values, first)

    def __call__(self, out: NetworkOutput, rng: np.random.Generator) -> PolicyStep:
        logits = out.heads[LOGITS][0].double()
        log_mu = mixture_log_probs(logits, self.epsilon).cpu().numpy()
        probs = np.exp(log_mu)
        u = rng.random(len(probs))[:, None]
        action = np.minimum((probs.cumsum(-1) < u).sum(-1), probs.shape[-1] - 1)
        extras = {
            "log_prob": log_mu[np.arange(len(action)), action].astype(np.float32),
            "env": self.env_index.copy(),
        }
        for name in self.values:
            extras[name] = out.heads[name][0].cpu().numpy().astype(np.float32)
        return PolicyStep(action.astype(np.int64), extras)


def policy_terms(logits: torch.Tensor, action: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``[T, B, A]`` logits and ``[T, B]`` actions -> (log pi(a|s), entropy), each ``[T, B]``."""
    log_pi = torch.log_softmax(logits, dim=-1)
    log_prob = log_pi.gather(-1, action.long().clamp(min=0).unsqueeze(-1)).squeeze(-1)
    entropy = -(log_pi.exp() * log_pi).sum(-1)
    return log_prob, entropy


__all__ = ["LOGITS", "BehaviourSample", "policy_terms"]

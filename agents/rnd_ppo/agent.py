"""The two registered on-policy algorithms: the shared actor-critic
(:class:`agents.rnd_ppo.actor_critic.OnPolicyActorCritic`) with their own names and configs.
"""

from __future__ import annotations

from agents.rnd_ppo.actor_critic import OnPolicyActorCritic
from agents.rnd_ppo.config import PPOConfig, RNDPPOConfig


class RNDPPO(OnPolicyActorCritic):
    """Recurrent PPO with Random Network Distillation (Burda et al. 2018): an extrinsic and
    an intrinsic value head, observation normalisation, automatic resume."""

    name = "rnd-ppo"
    config_cls = RNDPPOConfig


class PPO(OnPolicyActorCritic):
    """Recurrent PPO: one extrinsic value head (``--intrinsic`` off by default)."""

    name = "ppo"
    config_cls = PPOConfig


__all__ = ["PPO", "RNDPPO"]

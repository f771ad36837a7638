"""RND-PPO (and PPO, the same agent without the intrinsic reward) on the shared core: the
agent, its config, GAE for two heads, the PPO loss, running normalisation, the RND
networks, epsilon mixtures and the Atari wrappers."""

from agents.rnd_ppo.agent import PPO, RNDPPO
from agents.rnd_ppo.atari import make_env, resize_gray, rnd_view, stack_frames
from agents.rnd_ppo.config import (
    AtariSettings,
    DemoPretrainSettings,
    PPOConfig,
    PPOSettings,
    RNDPPOConfig,
    RNDSettings,
)
from agents.rnd_ppo.gae import GAEOutput, extrinsic_gae, gae, intrinsic_gae
from agents.rnd_ppo.normalize import (
    IntrinsicRewardScaler,
    ObservationNormalizer,
    RewardForwardFilter,
    RunningMeanStd,
)
from agents.rnd_ppo.ppo_loss import (
    PPOLossOutput,
    ValueTerms,
    combined_advantage,
    normalize_advantage,
    ppo_loss,
)
from agents.rnd_ppo.rnd import RND, IntrinsicReward

__all__ = [
    "PPO",
    "RND",
    "RNDPPO",
    "AtariSettings",
    "DemoPretrainSettings",
    "GAEOutput",
    "IntrinsicReward",
    "IntrinsicRewardScaler",
    "ObservationNormalizer",
    "PPOConfig",
    "PPOLossOutput",
    "PPOSettings",
    "RNDPPOConfig",
    "RNDSettings",
    "RewardForwardFilter",
    "RunningMeanStd",
    "ValueTerms",
    "combined_advantage",
    "extrinsic_gae",
    "gae",
    "intrinsic_gae",
    "make_env",
    "normalize_advantage",
    "ppo_loss",
    "resize_gray",
    "rnd_view",
    "stack_frames",
]

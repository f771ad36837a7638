"""Tiny RND-PPO / PPO configs for fast runs."""

from __future__ import annotations

from pathlib import Path

from agents.rnd_ppo import PPOConfig, RNDPPOConfig

TINY = dict(
    num_envs=2, rollout_length=16, segment_length=8, num_minibatches=2, update_epochs=2,
    hidden=16, lstm=16, rnd_embed_dim=16, rnd_hidden=16, obs_norm_init_steps=4,
    eval_every=0, eval_episodes=1, checkpoint_every=64, progress=False, tensorboard=False,
)  # fmt: skip


def tiny(run_dir: Path, env: str = "CartPole-v1", intrinsic: bool = True, **kw) -> RNDPPOConfig:
    cls = RNDPPOConfig if intrinsic else PPOConfig
    return cls(env=env, run_dir=run_dir, **{**TINY, "total_env_steps": 96, **kw})

"""The MountainCar fixes: the policy's vector input standardised by random steps
(--policy-obs-norm-steps) and the extrinsic reward scale (--ext-reward-scale)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.core.agent import EnvInfo
from agents.core.networks import VectorEncoder
from agents.core.obs_norm import standardised_spec
from agents.core.preprocess import Leaf, make_preprocessor, spec_from_json, spec_to_json
from agents.rnd_ppo import PPO, PPOConfig
from agents.rnd_ppo.rollout import rollout_targets
from demostudio.episode import make_env
from tests.agents_rnd_ppo.helpers import tiny


def test_standardised_spec_centres_and_scales_vector_leaves_only():
    spec = {
        "obs": Leaf("vector", (2,), center=(0.0, 0.0), half=(1.0, 1.0)),
        "grid": Leaf("grid", (7, 7, 3)),
    }
    batches = [{"obs": np.array([[1.0, 5.0], [3.0, 5.0]])}, {"obs": np.array([[5.0, 5.0]])}]
    out = standardised_spec(spec, batches)
    assert out["grid"] == spec["grid"] and out["grid"].center == ()
    assert out["obs"].center == pytest.approx((3.0, 5.0))
    assert out["obs"].half == pytest.approx((np.std([1.0, 3.0, 5.0]), 1.0))  # constant: 1
    enc = VectorEncoder(out["obs"], 8)
    x = torch.tensor([[3.0, 5.0], [5.0, 6.0]])
    scaled = (x - enc.center) * enc.inv_half
    expected = torch.tensor([[0.0, 0.0], [2.0 / float(np.std([1.0, 3.0, 5.0])), 1.0]])
    assert torch.allclose(scaled, expected)


def _info(env_id: str) -> EnvInfo:
    env = make_env(env_id, {})
    return EnvInfo(env_id, env, make_preprocessor(env.observation_space))


def test_mountaincar_policy_input_is_standardised_the_same_on_every_build(tmp_path):
    info = _info("MountainCar-v0")
    bounds = info.preprocess.spec["obs"]
    assert bounds.half == pytest.approx((0.9, 0.07))  # the core's scaling
    cfg = tiny(tmp_path, env="MountainCar-v0", intrinsic=False, rnn_layers=0,
               policy_obs_norm_steps=300)  # fmt: skip
    leaf = PPO(cfg).network_specs(info)["main"].obs_spec["obs"]
    # a random policy barely moves the car: velocity std ~0.005, position std ~0.05
    assert 0.001 < leaf.half[1] < 0.02 and 0.005 < leaf.half[0] < 0.3
    assert -0.7 < leaf.center[0] < -0.3
    again = PPO(cfg).network_specs(info)["main"].obs_spec["obs"]  # a resumed run's build
    assert (again.center, again.half) == (leaf.center, leaf.half)
    saved = spec_from_json(spec_to_json({"obs": leaf}))["obs"]  # the checkpoint's spec
    assert saved.center == pytest.approx(leaf.center) and saved.half == pytest.approx(leaf.half)
    default = PPO(tiny(tmp_path, env="MountainCar-v0", intrinsic=False)).network_specs(info)
    assert default["main"].obs_spec["obs"].half == bounds.half
    info.env.close()


def test_extrinsic_rewards_are_scaled_after_the_clip():
    s, b = 4, 2
    value = torch.zeros(s + 1, b)
    mask = torch.ones(s + 1, b, dtype=torch.bool)
    mask[-1] = False
    reward = torch.full((s, b), -3.0)  # clipped to -1, then scaled
    terminal = torch.zeros(s, b)

    def returns(scale: float) -> torch.Tensor:
        cfg = PPOConfig(ext_reward_scale=scale, ext_reward_clip=1.0, gamma_ext=0.9)
        return rollout_targets(cfg, value, None, reward, terminal, mask, None).ret_ext

    unscaled = returns(1.0)
    assert unscaled[-1, 0] == pytest.approx(-1.0)  # the clipped reward, V = 0 bootstrap
    assert torch.allclose(returns(0.01), 0.01 * unscaled)

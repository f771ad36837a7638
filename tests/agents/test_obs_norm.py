"""--policy-obs-norm-steps in the core: every algorithm's network can read its vector input
standardised by random steps, and a checkpoint carries the statistics."""

from __future__ import annotations

import numpy as np
import pytest

from agents.core.agent import EnvInfo
from agents.core.obs_norm import random_policy_observations, random_steps_spec
from agents.core.preprocess import make_preprocessor
from agents.core.restore import restore_agent
from agents.core.run import train
from agents.r2d2 import R2D2, R2D2Config
from agents.reactor import Reactor, ReactorConfig
from demostudio.episode import make_env
from tests.agents.test_training import TINY


def _info() -> EnvInfo:
    env = make_env("CartPole-v1", {})
    return EnvInfo("CartPole-v1", env, make_preprocessor(env.observation_space))


def test_random_steps_spec_is_the_mean_and_std_of_the_random_steps():
    info = _info()
    spec = info.preprocess.spec
    assert spec["obs"].half[2] == pytest.approx(0.2095 * 2, rel=1e-3)  # the bounds' scaling

    def make():
        return make_env("CartPole-v1", {})

    out = random_steps_spec(spec, make, info.preprocess, 2, 500, seed=3)
    raw = np.concatenate(list(random_policy_observations(make, 1, 500, 2, seed=3)))
    assert out["obs"].center == pytest.approx(tuple(raw.mean(0)))
    assert out["obs"].half == pytest.approx(tuple(raw.std(0)))
    # a random policy's pole: std ~0.09 rad, where the bounds scaled it by 0.42
    assert 0.03 < out["obs"].half[2] < 0.2
    assert random_steps_spec(spec, make, info.preprocess, 2, 0, seed=3) is spec
    info.env.close()


@pytest.mark.parametrize(("agent_cls", "cfg_cls"), [(R2D2, R2D2Config), (Reactor, ReactorConfig)])
def test_every_algorithm_takes_the_flag_and_the_checkpoint_keeps_it(tmp_path, agent_cls, cfg_cls):
    info = _info()
    extra = {"num_atoms": 11} if cfg_cls is ReactorConfig else {}
    cfg = cfg_cls(**{**TINY, **extra, "eval_every": 0}, policy_obs_norm_steps=400,
                  total_env_steps=200, run_dir=tmp_path / "run")  # fmt: skip
    leaf = agent_cls(cfg).network_specs(info)["main"].obs_spec["obs"]
    bounds = info.preprocess.spec["obs"]
    assert leaf.half != bounds.half and 0.03 < leaf.half[2] < 0.2
    again = agent_cls(cfg).network_specs(info)["main"].obs_spec["obs"]  # a resumed build
    assert (again.center, again.half) == (leaf.center, leaf.half)
    default = agent_cls(cfg_cls(**{**TINY, **extra})).network_specs(info)["main"]
    assert default.obs_spec["obs"].half == bounds.half
    info.env.close()

    result = train(agent_cls(cfg))
    restored = restore_agent(result.run_dir / "checkpoints" / "final.pt")
    encoder = restored.controller._policy.network.encoder.encoders["obs"]
    assert encoder.scaled
    assert 1.0 / encoder.inv_half.numpy() == pytest.approx(np.array(leaf.half), rel=1e-5)
    assert encoder.center.numpy() == pytest.approx(np.array(leaf.center), rel=1e-5, abs=1e-7)

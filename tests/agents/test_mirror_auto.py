"""``--mirror auto`` (R2D2, R2D3 and Reactor's default): the env's reflection where
agents.core.mirror knows one, none elsewhere, settled by the agent's configure and built into
the network; a mirror the user names is kept."""

from __future__ import annotations

import pytest

from agents.core.agent import EnvInfo
from agents.core.preprocess import make_preprocessor
from agents.r2d2 import R2D2Config
from agents.r2d2.agent import R2D2
from agents.r2d3 import R2D3Config
from agents.r2d3.agent import R2D3
from agents.reactor import Reactor, ReactorConfig
from demostudio.episode import make_env

AGENTS = [(R2D2, R2D2Config), (R2D3, R2D3Config), (Reactor, ReactorConfig)]


def _settled(agent_cls, cfg, env_id: str):
    agent = agent_cls(cfg)
    env = make_env(env_id)
    try:
        info = EnvInfo(env_id, env, make_preprocessor(env.observation_space))
        agent.configure(info)
        return cfg.mirror, agent.network_specs(info)["main"].mirror
    finally:
        env.close()


@pytest.mark.parametrize(("agent_cls", "config_cls"), AGENTS)
def test_auto_is_the_default_and_settles_on_the_envs_reflection(agent_cls, config_cls):
    assert config_cls().mirror == "auto"
    mirror, spec = _settled(agent_cls, config_cls(env="CartPole-v1"), "CartPole-v1")
    assert mirror == "env" and spec is not None and spec.action_perm == (1, 0)
    mirror, spec = _settled(agent_cls, config_cls(env="MountainCar-v0"), "MountainCar-v0")
    assert mirror == "none" and spec is None


@pytest.mark.parametrize(("agent_cls", "config_cls"), AGENTS)
def test_a_named_mirror_is_kept(agent_cls, config_cls):
    mirror, spec = _settled(agent_cls, config_cls(env="CartPole-v1", mirror="none"), "CartPole-v1")
    assert mirror == "none" and spec is None

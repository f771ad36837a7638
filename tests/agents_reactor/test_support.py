"""The value support's default follows the env (agents.reactor.support): the discounted
returns from its reward bounds and step limit, with a 10% margin; a given value wins, and the
settled values are what config.json records."""

from __future__ import annotations

import json

import pytest

from agents.core.agent import EnvInfo
from agents.core.preprocess import make_preprocessor
from agents.reactor import Reactor, ReactorConfig
from agents.reactor.support import FALLBACK, discounted_horizon, return_bounds, reward_bounds
from demostudio.episode import make_env

DOORKEY = "MiniGrid-DoorKey-5x5-v0"


def settled(env_id: str, **kw) -> tuple[float, float]:
    env = make_env(env_id)
    try:
        agent = Reactor(ReactorConfig(env=env_id, **kw))
        agent.configure(EnvInfo(env_id, env, make_preprocessor(env.observation_space)))
    finally:
        env.close()
    return agent.cfg.v_min, agent.cfg.v_max


def test_discounted_horizon():
    assert discounted_horizon(0.5, 3) == pytest.approx(1.75)  # 1 + 0.5 + 0.25
    assert discounted_horizon(0.9, None) == pytest.approx(10.0)
    assert discounted_horizon(1.0, 7) == 7.0
    with pytest.raises(ValueError, match=r"^--v-min/--v-max: expected values"):
        discounted_horizon(1.0, None)


def test_cartpole_support():
    # +1 per step for at most 500 steps: returns in [0, H], H = (1 - 0.99^500) / 0.01
    h = (1 - 0.99**500) / 0.01
    assert h == pytest.approx(99.343, abs=1e-3)
    assert settled("CartPole-v1") == (-9.94, 109.28)  # [0 - 0.1 H, H + 0.1 H], rounded out
    # the old hand-set default was [-10, 110]; the rule gives nearly the same
    assert settled("CartPole-v1", discount=0.9) == (-1.0, 11.0)  # H = 10 (0.9^500 ~ 0)


def test_mountaincar_support_holds_its_negative_returns():
    # -1 per step for at most 200 steps: returns in [-H, 0], H = (1 - 0.99^200) / 0.01
    v_min, v_max = settled("MountainCar-v0")
    assert (v_min, v_max) == (-95.27, 8.67)
    assert v_min < -(1 - 0.99**200) / 0.01 < 0.0 < v_max  # the old default's -10 clipped these


def test_minigrid_support_is_its_success_reward():
    # one reward in [0, 1] per episode, whatever the horizon
    assert settled(DOORKEY) == (-0.1, 1.1)
    assert settled(DOORKEY, discount=0.999) == (-0.1, 1.1)
    assert settled(DOORKEY, reward_clip=True) == (-0.1, 1.1)


def test_reward_clip_and_unknown_envs():
    env = make_env("LunarLander-v3")
    try:
        assert return_bounds(env, 0.99, False) == (-300.0, 300.0)
        lo, hi = return_bounds(env, 0.99, True)  # clipped rewards: within [-H, H]
        h = discounted_horizon(0.99, 1000)
        assert (lo, hi) == (pytest.approx(-h), pytest.approx(h))
    finally:
        env.close()

    class Unknown:
        unwrapped = object()

    assert reward_bounds(Unknown()) == FALLBACK  # [-1, 1] per step


def test_a_given_value_wins():
    assert settled("MountainCar-v0", v_min=-110.0, v_max=10.0) == (-110.0, 10.0)
    assert settled("MountainCar-v0", v_max=5.0) == (-95.27, 5.0)  # the other from the env
    assert settled(DOORKEY, v_min=-1.0) == (-1.0, 1.1)
    with pytest.raises(ValueError, match=r"^--v-min/--v-max: expected v_min < v_max"):
        settled("CartPole-v1", v_min=200.0)


def test_config_json_records_the_settled_support(tmp_path):
    from tests.agents_reactor.test_agent import TINY

    run = tmp_path / "run"
    cfg = ReactorConfig(**{**TINY, "env": "MountainCar-v0", "total_env_steps": 8},
                        run_dir=run)  # fmt: skip
    from agents.core.run import train

    train(Reactor(cfg))
    saved = json.loads((run / "config.json").read_text())
    assert (saved["v_min"], saved["v_max"]) == (-95.27, 8.67)


def test_compare_needs_no_support_override_for_mountaincar():
    from agents.compare import RunSpec, build_config

    spec = RunSpec("reactor", 0, "MountainCar-v0", ("demos",), 5000, 1000, 2, 4, {}, "/tmp/run",
                   "cpu", -110.0)  # fmt: skip
    cfg = build_config(spec)
    assert (cfg.v_min, cfg.v_max) == (None, None)  # settled when the run builds its agent
    env = make_env("MountainCar-v0")
    try:
        Reactor(cfg).configure(
            EnvInfo("MountainCar-v0", env, make_preprocessor(env.observation_space))
        )
    finally:
        env.close()
    assert cfg.v_min < -86.6 and cfg.v_max > 0.0  # every MountainCar return is representable

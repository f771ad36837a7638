"""The Reactor's temporally extended exploration (``--option-epsilon``): an option holds one
uniformly drawn action for n ~ zeta steps, the stored mu is the behaviour's own (1 on held
steps, eps / A + (1 - eps) mu on the others), options end with their episode, and the
actors' sequences carry that mu back through replay."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.core.checkpoint import load_checkpoint
from agents.core.networks import NetworkOutput
from agents.core.policy import BatchPolicy
from agents.reactor.acting import BehaviourSample, HeldOptions
from agents.reactor.config import ReactorConfig
from agents.reactor.learning import POLICY
from demostudio.cli import main
from demostudio.episode import make_env
from tests.agents_reactor.test_agent import TINY, _agent_pieces

PI = np.array([0.9, 0.1])


def _out(n: int) -> NetworkOutput:
    return NetworkOutput({POLICY: torch.log(torch.tensor(PI)).expand(1, n, 2)}, None)


def _steps(selector, n: int, count: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return [selector(_out(n), rng) for _ in range(count)]


def test_an_option_holds_one_action_and_its_mu_is_one():
    opts = HeldOptions(BehaviourSample(np.zeros(1), POLICY, full=True), 1.0, 2.0, 5)
    steps = _steps(opts, 1, 400)
    actions = np.array([s.action[0] for s in steps])
    mu = np.array([s.extras["mu"][0] for s in steps])
    # with epsilon 1 every step outside an option starts one: first step mu = 1/A, then 1
    starts = np.flatnonzero(mu < 1.0)
    np.testing.assert_allclose(mu[starts], 0.5)
    lengths = np.diff(np.append(starts, len(steps)))
    assert lengths.max() == 5 and lengths.min() == 1  # zeta(2) draws, capped at max_steps
    for lo, hi in zip(starts, np.append(starts[1:], len(steps))):
        assert (actions[lo:hi] == actions[lo]).all()  # one action held through the option
        held = np.stack([steps[t].extras["behaviour"][0] for t in range(lo + 1, hi)] or [[0, 0]])
        if hi - lo > 1:
            np.testing.assert_array_equal(held, np.eye(2)[[actions[lo]] * (hi - lo - 1)])
    assert 0.35 < (actions == 1).mean() < 0.65  # uniform options, not pi's 0.1


def test_outside_options_the_actions_follow_the_mixture_stored_as_mu():
    eps = 0.2
    opts = HeldOptions(BehaviourSample(np.zeros(64), POLICY), eps, 2.0, 1)  # 1-step options
    steps = _steps(opts, 64, 300)
    actions = np.stack([s.action for s in steps])
    mu = np.stack([s.extras["mu"] for s in steps])
    mixture = eps / 2 + (1 - eps) * PI
    np.testing.assert_allclose(mu, mixture[actions], rtol=1e-6)
    assert abs((actions == 1).mean() - mixture[1]) < 0.01
    assert set(steps[0].extras) == {"mu"}  # behaviour only with full


def test_a_new_episode_ends_the_option():
    cfg = ReactorConfig(**TINY, option_epsilon=1.0, option_exponent=1.01, option_max_steps=1000)
    agent, info, net = _agent_pieces(cfg)
    policy = BatchPolicy.copy_of(net, agent.acting_selector(2), 2, torch.device("cpu"),
                                 np.random.default_rng(1))  # fmt: skip
    env = make_env("CartPole-v1")
    obs = info.preprocess(np.stack([env.reset(seed=s)[0] for s in (0, 1)]))
    policy.act(obs)
    opts = policy.selector
    assert (opts.left > 0).all()  # zeta(1.01) options are long
    policy.reset(np.array([True, False]))  # what the actors do when env 0's episode ends
    assert opts.left[0] == 0 and opts.left[1] > 0
    mu = policy.act(obs).extras["mu"]
    assert mu[1] == 1.0 and mu[0] == 0.5  # env 1 still holds; env 0 starts a new option


def test_a_short_run_with_options_trains_and_checkpoints(tmp_path):
    run = tmp_path / "run"
    flags = [f"--{k.replace('_', '-')}={v}" for k, v in TINY.items() if not isinstance(v, bool)]
    flags += ["--no-progress", "--no-tensorboard", "--run-dir", str(run)]
    flags += ["--option-epsilon", "0.05", "--total-env-steps", "400"]
    assert main(["train", "reactor", *flags]) == 0
    saved = load_checkpoint(run)
    assert saved["config"]["option_epsilon"] == 0.05 and saved["counters"]["updates"] > 0


def test_the_reactor_acts_with_options_only_when_asked():
    from agents.reactor.agent import Reactor

    base = {"env": "CartPole-v1", "device": "cpu"}
    assert isinstance(Reactor(ReactorConfig(**base)).acting_selector(2), BehaviourSample)
    cfg = ReactorConfig(**base, option_epsilon=0.05, option_max_steps=8)
    selector = Reactor(cfg).acting_selector(2)
    assert isinstance(selector, HeldOptions) and selector.max_steps == 8


@pytest.mark.parametrize(
    "flag, value, expected",
    [
        ("--option-epsilon", "1.5", "--option-epsilon: expected in [0, 1], got 1.5"),
        ("--option-exponent", "1", "--option-exponent: expected > 1, got 1.0"),
        ("--option-max-steps", "0", "--option-max-steps: expected >= 1, got 0"),
    ],
)
def test_bad_option_flags_are_one_clean_line(capsys, flag, value, expected):
    assert main(["train", "reactor", "--env", "CartPole-v1", flag, value]) == 2
    assert expected in capsys.readouterr().err

"""The Reactor agent end to end: the behaviour probabilities mu stored by the actors and read
back through sequences and replay, demo steps mixed into batches with mu = 1, a short run
from the CLI with checkpoints, resume, evaluate and restore."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from agents.core.actor import VectorActor
from agents.core.agent import EnvInfo
from agents.core.batch import to_torch, uniform_sample
from agents.core.checkpoint import load_checkpoint
from agents.core.context import Counters
from agents.core.logger import read_metrics
from agents.core.losses import unroll
from agents.core.networks import NetworkOutput, RecurrentNetwork
from agents.core.policy import BatchPolicy, epsilon_ladder, mixture_log_probs
from agents.core.preprocess import make_preprocessor
from agents.core.replay import PrioritizedSequenceReplay
from agents.core.restore import restore_agent
from agents.core.run import train
from agents.core.sequences import EndBehavior
from agents.reactor import Reactor, ReactorConfig
from agents.reactor.learning import CRITIC, POLICY, CriticTorso, reactor_learner_loss
from demostudio.cli import main
from demostudio.episode import make_env
from tests.agents.test_training import TINY as TRAINING_TINY

DEMOS = Path(__file__).resolve().parents[2] / "demos" / "CartPole-v1"
TINY = {**TRAINING_TINY, "eval_every": 600, "num_atoms": 11, "device": "cpu"}
"""The core tests' tiny CartPole config, with a small distributional critic."""


@pytest.mark.parametrize("policy_gradient", ["beta_loo", "tis"])
def test_the_acting_policy_stores_mu_and_with_tis_the_whole_behaviour(policy_gradient):
    agent = Reactor(ReactorConfig(**TINY, epsilon_base=0.2, policy_gradient=policy_gradient))
    logits = torch.log(torch.tensor([[[0.9, 0.1], [0.5, 0.5]]]))  # [1, n=2, A=2]
    step = agent.acting_selector(2)(NetworkOutput({POLICY: logits}, None),
                                    np.random.default_rng(0))  # fmt: skip
    full = policy_gradient == "tis"
    assert set(step.extras) == ({"mu", "behaviour"} if full else {"mu"})
    eps = epsilon_ladder(2, 0.2, agent.cfg.epsilon_alpha)
    mu = (1 - eps[:, None]) * np.array([[0.9, 0.1], [0.5, 0.5]]) + eps[:, None] / 2
    np.testing.assert_allclose(step.extras["mu"], mu[[0, 1], step.action], rtol=1e-6)


def _agent_pieces(cfg: ReactorConfig):
    agent = Reactor(cfg)
    env = make_env("CartPole-v1")
    info = EnvInfo("CartPole-v1", env, make_preprocessor(env.observation_space))
    torch.manual_seed(0)
    net = RecurrentNetwork(agent.network_specs(info)["main"])
    return agent, info, net


@pytest.mark.parametrize("policy_gradient", ["beta_loo", "tis"])
def test_mu_stored_by_the_actors_reads_back_through_replay(policy_gradient):
    cfg = ReactorConfig(**TINY, epsilon_base=0.3, policy_gradient=policy_gradient)
    agent, info, net = _agent_pieces(cfg)
    policy = BatchPolicy.copy_of(net, agent.acting_selector(2), 2, torch.device("cpu"),
                                 np.random.default_rng(1))  # fmt: skip
    actor = VectorActor([lambda: make_env("CartPole-v1") for _ in range(2)], policy,
                        info.preprocess, cfg.sequence_length, cfg.period, EndBehavior.ZERO_PAD,
                        seed=0)  # fmt: skip
    replay = PrioritizedSequenceReplay(256, seed=0)
    for _ in range(150):
        step = actor.step()
        if step.sequences is not None:
            replay.add(step.sequences)
    actor.close()
    sample = replay.sample(16)
    batch = to_torch(uniform_sample(sample.batch, sample.index), torch.device("cpu"))
    # the same network from the stored state gives back the stored behaviour probabilities
    logits = unroll(net, batch, 0, grad=False).heads[POLICY]
    mu = mixture_log_probs(logits, 0.3).exp()
    mask = batch.mask
    taken = mu.gather(-1, batch.action.unsqueeze(-1)).squeeze(-1)
    torch.testing.assert_close(batch.extras["mu"][mask], taken[mask].float(), atol=1e-4, rtol=0)
    assert bool((batch.extras["mu"][~mask] == 0).all())
    if policy_gradient == "tis":
        torch.testing.assert_close(batch.extras["behaviour"][mask], mu[mask].float(), atol=1e-4,
                                   rtol=0)  # fmt: skip
    else:
        assert set(batch.extras) == {"mu"}


def test_critic_torso_blocks_the_policy_gradient_from_the_shared_torso():
    _, _, net = _agent_pieces(ReactorConfig(**TINY))
    t, b = 5, 3
    obs = {k: torch.randn(t, b, 4) for k in net.encoder.encoders}
    args = (obs, torch.zeros(t, b, dtype=torch.long), torch.zeros(t, b), net.initial_state(b))
    full, blocked = net(*args), CriticTorso(net)(*args)
    for k in (POLICY, CRITIC):  # the same outputs
        torch.testing.assert_close(blocked.heads[k], full.heads[k])
    blocked.heads[POLICY].sum().backward()
    torso = [p for n, p in net.named_parameters() if not n.startswith("heads.")]
    assert all(p.grad is None for p in torso)  # the policy trains its head only
    assert all(p.grad is not None for p in net.heads[POLICY].parameters())
    blocked.heads[CRITIC].sum().backward()
    assert all(p.grad is not None and bool(p.grad.abs().sum() > 0) for p in torso)


class RecordingReactor(Reactor):
    """Reactor whose loss keeps every batch it sees (to look at the mixed batches)."""

    batches: list

    def loss(self):
        self.batches = []

        def loss(learner, batch):
            self.batches.append(batch)
            return reactor_learner_loss(learner, batch, self.cfg)

        return loss


@pytest.mark.parametrize("policy_gradient", ["beta_loo", "tis"])
def test_demos_are_mixed_into_batches_with_mu_one(tmp_path, policy_gradient):
    cfg = ReactorConfig(**{**TINY, "eval_every": 0}, total_env_steps=300, demos=(DEMOS,),
                        demo_ratio=0.5, policy_gradient=policy_gradient,
                        run_dir=tmp_path / "run")  # fmt: skip
    agent = RecordingReactor(cfg)
    result = train(agent)
    assert result.updates >= 10 and len(agent.batches) == result.updates
    demo_elements = agent_elements = 0
    for b in agent.batches:
        demo, mask, mu = b.is_demo, b.mask, b.extras["mu"]
        demo_elements += int(demo.sum())
        agent_elements += int((~demo).sum())
        dm = mask[:, demo]
        assert bool((mu[:, demo][dm] == 1).all()) and bool((mu[:, demo][~dm] == 0).all())
        am = mask[:, ~demo]
        assert bool((mu[:, ~demo][am] > 0).all()) and bool((mu[:, ~demo][am] <= 1).all())
        if policy_gradient == "tis":
            one_hot = torch.nn.functional.one_hot(b.action, 2).float()
            beh = b.extras["behaviour"]
            torch.testing.assert_close(beh[:, demo][dm], one_hot[:, demo][dm])
    total = demo_elements + agent_elements
    assert 0.35 < demo_elements / total < 0.65  # demo_ratio 0.5
    rows = read_metrics(tmp_path / "run")
    assert any(r.get("demo_ratio") == 0.5 for r in rows if r["kind"] == "train")


def test_cli_run_checkpoints_resumes_evaluates_and_restores(tmp_path, capsys):
    run = tmp_path / "run"
    flags = [f"--{k.replace('_', '-')}={v}" for k, v in TINY.items() if not isinstance(v, bool)]
    flags += ["--no-progress", "--no-tensorboard", "--trust-region", "--run-dir", str(run)]
    flags += ["--learning-rate", "1e-3", "--learning-rate-final", "5e-5"]
    flags += ["--learning-rate-steps", "1300"]
    assert main(["train", "reactor", *flags, "--total-env-steps", "700"]) == 0
    first = load_checkpoint(run)
    # the rate anneals with the env steps (to --learning-rate-final, 5e-5, at 1300)
    lr = first["optimizer"]["param_groups"][0]["lr"]
    assert lr == pytest.approx(1e-3 + (5e-5 - 1e-3) * first["counters"]["env_steps"] / 1300)
    assert first["algo"] == "reactor" and first["counters"]["env_steps"] >= 700
    assert set(first["targets"]) == {"main"}  # the Polyak-averaged network
    spec = first["network_specs"]["main"]["heads"]
    assert spec == {"logits": {"kind": "logits", "atoms": 0},
                    "critic": {"kind": "distributional_q", "atoms": 11}}  # fmt: skip
    updates = first["counters"]["updates"]
    assert main(["train", "reactor", "--env", "CartPole-v1", "--run-dir", str(run), "--resume",
                 "--total-env-steps", "1300", "--no-progress"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "reactor: 13" in out
    second = load_checkpoint(run)
    assert second["counters"]["env_steps"] >= 1300 and second["counters"]["updates"] > updates
    assert second["config"]["trust_region"] is True  # the saved config, not the defaults
    assert second["optimizer"]["param_groups"][0]["lr"] == pytest.approx(5e-5)  # then held
    rows = read_metrics(run)
    assert any(r["kind"] == "resume" for r in rows)
    assert {"critic_loss", "policy_loss", "entropy", "trust_region_active", "learning_rate"} <= set(
        [r for r in rows if r["kind"] == "train"][-1]
    )
    assert main(["evaluate", str(run), "--episodes", "2"]) == 0
    assert "mean return" in capsys.readouterr().out
    restored = restore_agent(run)
    env = make_env("CartPole-v1")
    obs, info = env.reset(seed=3)
    restored.controller.reset(env, obs, info)
    assert restored.algo == "reactor" and restored.controller.act(env, obs) in (0, 1)


def test_bad_reactor_flags_are_one_clean_line(capsys):
    assert main(["train", "reactor", "--env", "CartPole-v1", "--v-min", "5", "--v-max", "1"]) == 2
    assert "--v-max: expected > --v-min (5.0), got 1.0" in capsys.readouterr().err


def test_the_learning_rate_anneals_linearly_then_holds():
    """--learning-rate to --learning-rate-final over --learning-rate-steps env steps, set on
    the optimiser after every iteration (the default: 5e-4 to 5e-5 over 40k env steps, then
    held); none keeps the rate constant."""
    param = torch.nn.Parameter(torch.zeros(1))
    for cfg, expected in [
        (ReactorConfig(), [5e-4, 2.75e-4, 5e-5, 5e-5]),
        (ReactorConfig(learning_rate=1e-3, learning_rate_final=None), [1e-3] * 4),
    ]:
        agent = Reactor(cfg)
        opt = torch.optim.Adam([param], lr=agent.cfg.learning_rate)
        ctx = SimpleNamespace(counters=Counters(), learner=SimpleNamespace(optimizer=opt))
        for steps, lr in zip([0, 20_000, 40_000, 80_000], expected, strict=True):
            ctx.counters.env_steps = steps
            assert agent.after_iteration(ctx) is False
            assert opt.param_groups[0]["lr"] == pytest.approx(lr)
            assert agent.metrics(ctx)["learning_rate"] == pytest.approx(lr)

"""DQfD: the large-margin loss by hand, the loss terms, importance weights of one shared
replay, the demo priority bonus, pre-training without any env, short end-to-end runs."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest
import torch

from agents.core.logger import read_metrics
from agents.core.losses import q_values
from agents.core.mixing import DataSource, ReplayMix
from agents.core.replay import PrioritizedSequenceReplay
from agents.dqfd import (
    DQfD,
    DQfDConfig,
    DQfDLoss,
    PriorityShare,
    global_weights,
    large_margin_loss,
    train_dqfd,
)
from demostudio.cli import main

from .conftest import TINY
from .helpers import fake_sequences, make_learner, torch_batch

DQFD_TINY = dict(TINY, trace=6, period=3, n_step=3, pretrain_updates=30, pretrain_log_every=10)


def test_large_margin_loss_by_hand():
    q = torch.tensor([[[1.0, 2.0, 0.5], [3.0, 1.0, 2.5], [3.0, 1.0, 1.0], [0.0, 0.0, 0.0]]])
    a = torch.tensor([[0, 0, 0, 2]])
    got = large_margin_loss(q, a, 0.8)
    # max_a [Q(s,a) + 0.8 * (a != a_E)] - Q(s, a_E)
    want = torch.tensor([[2.8 - 1.0, 3.3 - 3.0, 0.0, 0.8]])
    torch.testing.assert_close(got, want)
    assert large_margin_loss(q, a, 0.0)[0, 2] == 0.0


def test_margin_term_applies_to_demo_elements_only():
    cfg = DQfDConfig(demos=("x",), burn_in=0, trace=5, n_step=3, lambda_l2=0.0)
    seqs = fake_sequences(4, 6)
    source = np.array([0, 1, 0, 1])
    learner = make_learner(cfg, DQfDLoss(cfg))
    batch = torch_batch(seqs, source)
    with_margin = DQfDLoss(cfg)(learner, batch)
    cfg0 = DQfDConfig(demos=("x",), burn_in=0, trace=5, n_step=3, lambda_l2=0.0, lambda_margin=0)
    without = DQfDLoss(cfg0)(learner, batch)
    with torch.no_grad():
        q, _ = q_values(learner, batch, cfg.burn_in)
    margin = large_margin_loss(q, batch.action, 0.8) * batch.mask.float()
    per_seq = margin.sum(0) / batch.mask.float().sum(0)
    by_hand = float((per_seq * torch.tensor([0.0, 1.0, 0.0, 1.0])).mean())
    assert by_hand > 0
    assert float((with_margin.loss - without.loss).detach()) == pytest.approx(by_hand, rel=1e-5)
    demo_steps = batch.mask[:, [1, 3]]
    assert with_margin.metrics["loss_margin"] == pytest.approx(
        float(margin[:, [1, 3]].sum() / demo_steps.sum()), rel=1e-5
    )


def test_l2_term_and_n_step_weight():
    cfg = DQfDConfig(demos=("x",), burn_in=0, trace=5, n_step=3, lambda_l2=0.5)
    learner = make_learner(cfg, DQfDLoss(cfg))
    batch = torch_batch(fake_sequences(2, 6), np.array([0, 0]))
    out = DQfDLoss(cfg)(learner, batch)
    squares = sum(float((p.detach() ** 2).sum()) for p in learner.network.parameters())
    assert out.metrics["loss_l2"] == pytest.approx(squares, rel=1e-5)
    cfg_no = DQfDConfig(demos=("x",), burn_in=0, trace=5, n_step=3, lambda_l2=0.0)
    assert float((out.loss - DQfDLoss(cfg_no)(learner, batch).loss).detach()) == pytest.approx(
        0.5 * squares, rel=1e-4
    )
    cfg_n0 = DQfDConfig(demos=("x",), burn_in=0, trace=5, n_step=3, lambda_l2=0.0,
                        lambda_n_step=0.0)  # fmt: skip
    only_1step = DQfDLoss(cfg_n0)(learner, batch)
    assert float(only_1step.loss.detach()) == pytest.approx(out.metrics["loss_1step"], rel=1e-5)


def _buffers(n_agent: int, n_demo: int):
    agent = PrioritizedSequenceReplay(1000, 0.6, 0.6, seed=1, name="agent")
    demo = PrioritizedSequenceReplay(1000, 0.6, 0.6, seed=2, name="demo")
    agent.add(fake_sequences(n_agent, 6, seed=3))
    demo.add(fake_sequences(n_demo, 6, seed=4))
    return agent, demo


def test_global_weights_match_one_shared_replay():
    agent, demo = _buffers(30, 10)
    rng = np.random.default_rng(0)
    agent.update_priorities(np.arange(30), rng.uniform(0.1, 2, 30))
    demo.update_priorities(np.arange(10), rng.uniform(1, 3, 10))
    mix = ReplayMix(
        agent, [DataSource("demo", demo, PriorityShare(demo, agent), demo=True)], seed=0
    )
    sample = mix.sample(16, 0)
    w = global_weights(torch.from_numpy(sample.weight), torch.from_numpy(sample.source),
                       sample.held)  # fmt: skip
    # by hand: one replay of 40 items, P(i) = p_i^a / (sum of both trees)
    total = agent.tree.total + demo.tree.total
    p = np.where(sample.source == 0, agent.tree.get(sample.index), demo.tree.get(sample.index))
    want = (40 * p / total) ** -0.6
    np.testing.assert_allclose(w.numpy(), want / want.max(), rtol=1e-5)


def test_global_weights_use_the_exponent_the_batch_was_weighted_with():
    """With an annealed beta (--priority-beta-final) each buffer weights by the mix's beta,
    and so does the one shared replay the weights stand for."""
    agent, demo = _buffers(30, 10)
    rng = np.random.default_rng(1)
    agent.update_priorities(np.arange(30), rng.uniform(0.1, 2, 30))
    share = PriorityShare(demo, agent)
    mix = ReplayMix(agent, [DataSource("demo", demo, share, demo=True)], seed=0,
                    beta=lambda _t: 1.0)  # fmt: skip
    sample = mix.sample(16, 0)
    assert sample.held.beta.tolist() == [1.0, 1.0] and sample.held.size.tolist() == [30, 10]
    w = global_weights(torch.from_numpy(sample.weight), torch.from_numpy(sample.source),
                       sample.held)  # fmt: skip
    total = agent.tree.total + demo.tree.total
    p = np.where(sample.source == 0, agent.tree.get(sample.index), demo.tree.get(sample.index))
    want = (40 * p / total) ** -1.0
    np.testing.assert_allclose(w.numpy(), want / want.max(), rtol=1e-5)


def test_demo_priority_bonus_keeps_demos_sampled():
    """After TD errors vanish, demos keep priority epsilon_d and agent data epsilon_a: a
    handful of demos among many agent sequences still fill most of each batch; with equal
    bonuses their share falls to about their share of the items."""

    def share_after_zero_td(demo_bonus: float) -> tuple[float, float]:
        cfg = DQfDConfig(demos=("x",), burn_in=0, trace=5, n_step=3,
                         demo_priority_bonus=demo_bonus, agent_priority_bonus=0.001)  # fmt: skip
        agent, demo = _buffers(200, 10)
        loss = DQfDLoss(cfg)
        share = PriorityShare(demo, agent)
        mix = ReplayMix(agent, [DataSource("demo", demo, share, demo=True)], seed=0)
        learner = make_learner(cfg, loss)
        for i in range(40):  # visit every item
            sample = mix.sample(64, 0)
            is_demo = (sample.source == 1)[:, None]
            bonus = np.where(is_demo, cfg.demo_priority_bonus, cfg.agent_priority_bonus)
            mask = sample.batch.mask
            if i < 2:  # the loss's |TD| carries each element's bonus on its learned steps
                out = loss(learner, torch_batch(sample.batch, sample.source))
                td = out.td_abs.T.numpy()
                assert np.all(td[mask] >= np.broadcast_to(bonus, td.shape)[mask] - 1e-6)
                assert np.all(td[~mask] == 0)
            # TD errors gone: what remains of each priority is the bonus
            mix.update_priorities(sample, np.where(mask, bonus, 0.0), mask)
        drawn = np.mean([np.mean(mix.sample(64, 0).source == 1) for _ in range(50)])
        return share(0), drawn

    share, drawn = share_after_zero_td(1.0)
    assert share == pytest.approx(10 / (10 + 200 * 0.001**0.6), rel=1e-3)  # ~0.76
    assert drawn == pytest.approx(share, abs=0.05)
    low_share, low_drawn = share_after_zero_td(0.001)
    assert low_share == pytest.approx(10 / 210, rel=1e-3)
    assert low_drawn < 0.1 < 0.6 < drawn


class _NoTouchEnv(gym.Wrapper):
    """CartPole that raises if reset or stepped while ``forbidden`` is set."""

    forbidden = False
    touched = 0

    def __init__(self, **kwargs):
        super().__init__(gym.make("CartPole-v1", **kwargs))

    def reset(self, **kwargs):
        self._check()
        return self.env.reset(**kwargs)

    def step(self, action):
        self._check()
        return self.env.step(action)

    def _check(self):
        if _NoTouchEnv.forbidden:
            _NoTouchEnv.touched += 1
            raise AssertionError("pre-training touched an env")


class _Guarded(DQfD):
    def on_phase_start(self, ctx, phase):
        _NoTouchEnv.forbidden = phase.name == "pretrain"

    def on_phase_end(self, ctx, phase):
        if phase.name == "pretrain":
            _NoTouchEnv.forbidden = False
            self.updates_after_pretrain = ctx.learner.updates


def test_pretraining_touches_no_env(tmp_path, cartpole_demos):
    env_id = "DemoStudioTest/NoTouchCartPole-v0"
    if env_id not in gym.registry:
        gym.register(env_id, entry_point=_NoTouchEnv, max_episode_steps=500)
    from agents.core.run import train

    cfg = DQfDConfig(**{**DQFD_TINY, "env": env_id}, demos=(cartpole_demos,),
                     demo_env_override="CartPole-v1", total_env_steps=200, eval_every=0,
                     run_dir=tmp_path / "run")  # fmt: skip
    algo = _Guarded(cfg)
    result = train(algo)
    assert _NoTouchEnv.touched == 0
    assert algo.updates_after_pretrain == 30
    assert result.updates > 30 and result.env_steps >= 200  # then it did interact
    rows = read_metrics(tmp_path / "run")
    pre = [r for r in rows if r["kind"] == "pretrain"]
    assert [r["updates"] for r in pre] == [10, 20, 30] and all(r["env_steps"] == 0 for r in pre)
    assert {"loss_1step", "loss_nstep", "loss_margin", "loss_l2"} <= set(pre[0])
    assert (tmp_path / "run" / "checkpoints" / "pretrained.pt").exists()
    # a resumed run continues from its checkpoint without pre-training again
    more = DQfDConfig(**{**cfg.__dict__, "total_env_steps": 300, "resume": True})
    again = _Guarded(more)
    resumed = train(again)
    assert not hasattr(again, "updates_after_pretrain") and resumed.updates > result.updates
    assert len([r for r in read_metrics(tmp_path / "run") if r["kind"] == "pretrain"]) == 3


def test_dqfd_end_to_end_cli(tmp_path, cartpole_demos, capsys):
    run = tmp_path / "dqfd"
    rc = main(["train", "dqfd", "--env", "CartPole-v1", "--demos", str(cartpole_demos),
               "--num-actors", "2", "--hidden", "16", "--lstm", "16", "--trace", "6",
               "--period", "3", "--n-step", "3", "--batch-size", "8", "--min-replay", "8",
               "--pretrain-updates", "40", "--total-env-steps", "1000", "--eval-every", "500",
               "--eval-episodes", "1", "--no-progress", "--no-tensorboard", "--device", "cpu",
               "--run-dir", str(run)])  # fmt: skip
    assert rc == 0 and "dqfd: " in capsys.readouterr().out
    config = json.loads((run / "config.json").read_text())
    assert config["algo"] == "dqfd" and config["recurrent"] is False
    evals = [r for r in read_metrics(run) if r["kind"] == "eval"]
    assert evals[0]["env_steps"] == 0 and len(evals) >= 2  # after pre-training, then 500
    train_rows = [r for r in read_metrics(run) if r["kind"] == "train"]
    assert train_rows and "demo_priority_share" in train_rows[0]
    assert main(["evaluate", str(run), "--episodes", "1", "--device", "cpu"]) == 0
    rec = tmp_path / "rec"
    assert main(["watch", str(run), "--headless", "--record", str(rec), "--episodes", "1",
                 "--device", "cpu"]) == 0  # fmt: skip
    assert len(list((rec / "CartPole-v1").glob("*.h5"))) == 1
    # user errors name the flag
    assert main(["train", "dqfd", "--env", "CartPole-v1", "--run-dir", str(tmp_path / "x")]) == 2
    assert main(["train", "dqfd", "--env", "CartPole-v1", "--demos", str(cartpole_demos),
                 "--margin", "-1", "--run-dir", str(tmp_path / "y")]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "--demos: expected at least one" in err and "--margin: expected >= 0, got -1" in err


def test_recurrent_dqfd_option(tmp_path, cartpole_demos):
    cfg = DQfDConfig(**DQFD_TINY, recurrent=True, burn_in=2, demos=(cartpole_demos,),
                     total_env_steps=200, eval_every=0, run_dir=tmp_path / "r")  # fmt: skip
    result = train_dqfd(cfg)
    assert result.updates > 30
    payload = torch.load(tmp_path / "r" / "checkpoints" / "final.pt", weights_only=True)
    assert any(k.startswith("core.weight_ih") for k in payload["networks"]["main"])  # an LSTM

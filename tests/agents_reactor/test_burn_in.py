"""The Reactor learns every step of a sequence that starts its episode (the core's
``learn_mask``): the first ``burn_in`` steps of every episode and demo get a loss and a
priority, their gradient reaches the torso (also through ``CriticTorso``), and the Retrace
targets of the steps learned before are unchanged."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.core.batch import TorchBatch, to_torch, uniform_sample
from agents.core.losses import episode_starts, unroll
from agents.core.networks import NetworkSpec, RecurrentNetwork
from agents.core.preprocess import Leaf
from agents.core.sequences import EndBehavior, SequenceWriter, concat_batches
from agents.reactor import Reactor, ReactorConfig
from agents.reactor.acting import MU
from agents.reactor.distributional import distributional_retrace_targets
from agents.reactor.learning import CRITIC, POLICY, reactor_learner_loss
from agents.reactor.loss import ReactorLossInputs, reactor_loss
from agents.reactor.retrace import retrace_targets

BURN, TRACE, PERIOD, LSTM = 4, 6, 3, 8
LENGTH = BURN + TRACE + 1


def episode_sequences(steps: int) -> TorchBatch:
    """The sequences of one episode of ``steps`` steps (observation = step index), with
    behaviour probabilities that differ per step; column 0 starts the episode."""
    rng = np.random.default_rng(0)
    writer = SequenceWriter(LENGTH, PERIOD, EndBehavior.ZERO_PAD)
    zero = np.zeros(LSTM, np.float32)
    out = []
    writer.begin({"obs": np.zeros(2, np.float32)}, zero, zero)
    for t in range(steps):
        mu = {MU: np.float32(rng.uniform(0.3, 1.0))}
        obs = {"obs": np.full(2, (t + 1) / steps, np.float32)}
        got = writer.step(t % 2, 1.0, t == steps - 1, obs, zero, zero, mu)
        out += [got] if got is not None else []
    got = writer.end()
    out += [got] if got is not None else []
    seqs = concat_batches(out)
    return to_torch(uniform_sample(seqs), torch.device("cpu"))


def config(**kw) -> ReactorConfig:
    return ReactorConfig(burn_in=BURN, trace=TRACE, period=PERIOD, hidden=8, lstm=LSTM,
                         num_atoms=11, v_min=-2.0, v_max=12.0, **kw)  # fmt: skip


class View:
    """The learner as the loss sees it: an online network and its (averaged) target."""

    def __init__(self, cfg: ReactorConfig):
        spec = NetworkSpec({"obs": Leaf("vector", (2,))}, 2, cfg.hidden, cfg.lstm, True,
                           Reactor(cfg).heads())  # fmt: skip
        torch.manual_seed(0)
        self.cfg = cfg
        self.networks = {"main": RecurrentNetwork(spec)}
        self.targets = {"main": RecurrentNetwork(spec)}
        self.device = torch.device("cpu")

    network = property(lambda self: self.networks["main"])
    target = property(lambda self: self.targets["main"])


VARIANTS = {
    "distributional": {},
    "expected": dict(distributional=False),
    "critic torso": dict(policy_trains_torso=False),
    "tis trust region": dict(policy_gradient="tis", trust_region=True),
}


@pytest.mark.parametrize("name", ["distributional", "expected", "critic torso"])
def test_the_first_steps_of_an_episode_get_a_loss_and_a_priority(name):
    batch = episode_sequences(12)
    assert episode_starts(batch).tolist() == [True] + [False] * (batch.mask.shape[1] - 1)
    cfg = config(**VARIANTS[name])
    out = reactor_learner_loss(View(cfg), batch, cfg)
    # the sequence that starts the episode learns its burn-in steps, with a priority
    assert out.learn_mask[:BURN, 0].all()
    assert bool((out.td_abs[:BURN, 0] > 0).all())
    # the others do not (their burn-in only refreshes a stale state)
    assert not out.learn_mask[:BURN, 1:].any()
    assert bool((out.td_abs[:BURN, 1:] == 0).all())
    # every step of the episode is learned by some sequence (before: not steps 0..3)
    first = (batch.obs["obs"][0, :, 0] * 12).round().long()  # episode step at row 0
    learned = {int(first[b]) + t for t, b in zip(*np.nonzero(out.learn_mask.numpy()))}
    assert learned == set(range(12))


@pytest.mark.parametrize("name", list(VARIANTS))
def test_targets_and_priorities_of_the_other_rows_are_unchanged(name):
    """The old loss saw only rows ``burn:`` of every sequence; on those rows the priorities
    (hence the Retrace targets: |Q_ret - Q| or TV(q*, q)) are the same as before."""
    cfg = config(**VARIANTS[name])
    if cfg.policy_gradient == "tis":  # TIS reads the whole behaviour distribution
        batch = episode_sequences(12)
        mu = batch.extras[MU]
        other = (1.0 - mu).unsqueeze(-1)
        full = torch.where(torch.nn.functional.one_hot(batch.action, 2).bool(),
                           mu.unsqueeze(-1), other)  # fmt: skip
        batch = batch._replace(extras={**batch.extras, "behaviour": full})
    else:
        batch = episode_sequences(12)
    view = View(cfg)
    new = reactor_learner_loss(view, batch, view.cfg)
    online = unroll(view.network, batch, BURN)
    average = unroll(view.target, batch, 0, grad=False)
    s = slice(BURN, None)
    old = reactor_loss(  # what the loss computed before: the rows after the burn-in only
        ReactorLossInputs(
            policy_logits=online.heads[POLICY][s], critic=online.heads[CRITIC][s],
            target_critic=average.heads[CRITIC][s],
            average_logits=average.heads[POLICY][s] if cfg.trust_region else None,
            action=batch.action[s], reward=batch.reward[s], terminal=batch.terminal[s],
            mask=batch.mask[s], mu_taken=batch.extras[MU][s],
            mu=batch.extras["behaviour"][s] if cfg.policy_gradient == "tis" else None,
            weight=batch.weight,
        ),
        cfg, cfg.discount,
    )  # fmt: skip
    assert torch.equal(new.learn_mask[s], old.learn_mask)
    torch.testing.assert_close(new.td_abs[s], old.priority, atol=1e-6, rtol=0)


def test_retrace_targets_only_look_forward():
    """Targets over whole sequences equal, on rows ``burn:``, those over rows ``burn:``
    (so dropping or adding the burn-in rows changes no learned target)."""
    g = torch.Generator().manual_seed(0)
    t, b, a, n = LENGTH, 3, 2, 11
    reward = torch.randn(t, b, generator=g, dtype=torch.float64)
    terminal = torch.zeros(t, b, dtype=torch.float64)
    terminal[7, 1] = 1.0
    mask = torch.ones(t, b, dtype=torch.bool)
    mask[8:, 1] = False
    action = torch.randint(0, a, (t, b), generator=g)
    pi = torch.softmax(torch.randn(t, b, a, generator=g, dtype=torch.float64), -1)
    traces = torch.rand(t, b, generator=g, dtype=torch.float64)
    probs = torch.softmax(torch.randn(t, b, a, n, generator=g, dtype=torch.float64), -1)
    q = torch.randn(t, b, a, generator=g, dtype=torch.float64)
    s = slice(BURN, None)

    def dist(x):
        return distributional_retrace_targets(*x, 0.9, -3.0, 3.0)

    def expected(x):
        r, term, m, act, q_, p, c = x
        return retrace_targets(r, term, m, q_.gather(-1, act.unsqueeze(-1)).squeeze(-1),
                               (p * q_).sum(-1), c, 0.9)  # fmt: skip

    args = (reward, terminal, mask, action, probs, pi, traces)
    torch.testing.assert_close(dist(args)[s], dist(tuple(x[s] for x in args)))
    args = (reward, terminal, mask, action, q, pi, traces)
    torch.testing.assert_close(expected(args)[s], expected(tuple(x[s] for x in args)))


@pytest.mark.parametrize("policy_trains_torso", [True, False])
def test_the_burn_in_of_a_fresh_sequence_trains_the_torso(policy_trains_torso):
    """Also through ``CriticTorso`` (``--no-policy-trains-torso``): only the sequence that
    starts its episode gets a gradient in its burn-in steps."""
    batch = episode_sequences(12)
    x = {"obs": batch.obs["obs"].clone().requires_grad_(True)}
    view = View(config(policy_trains_torso=policy_trains_torso))
    reactor_learner_loss(view, batch._replace(obs=x), view.cfg).loss.backward()
    g = x["obs"].grad
    assert bool((g[:BURN, 0].abs().sum(-1) > 0).all())
    assert g[:BURN, 1:].abs().sum() == 0
    assert g[BURN:-1, 1:].abs().sum() > 0

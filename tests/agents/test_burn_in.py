"""Burn-in: it refreshes a stale stored state, so a sequence that starts its episode (whose
stored state is the episode's true initial state) learns from its very first step."""

from __future__ import annotations

import numpy as np
import torch

from agents.core.batch import LossOutput, TorchBatch, to_torch, uniform_sample
from agents.core.demos import STEP_EXTRA, keep_demo_steps
from agents.core.losses import episode_starts, learn_mask, unroll
from agents.core.networks import RecurrentQNetwork
from agents.core.preprocess import Leaf
from agents.core.sequences import EndBehavior, SequenceWriter, concat_batches
from agents.r2d2.learning import r2d2_loss

BURN, TRACE, PERIOD = 4, 6, 3
LENGTH = BURN + TRACE + 1


def episode_sequences(steps: int, extras: bool = False):
    """The sequences of one episode of ``steps`` steps (observation = step index)."""
    writer = SequenceWriter(LENGTH, PERIOD, EndBehavior.ZERO_PAD)
    zero = np.zeros(8, np.float32)  # the LSTM size of network()
    extra = {STEP_EXTRA: np.zeros((), np.float32)} if extras else {}
    out = []
    writer.begin({"obs": np.full(2, 0.0, np.float32)}, zero, zero)
    for t in range(steps):
        step_extra = {STEP_EXTRA: np.float32(t)} if extras else extra
        got = writer.step(
            t % 2, -1.0, t == steps - 1, {"obs": np.full(2, t + 1.0, np.float32)},
            zero, zero, step_extra,
        )  # fmt: skip
        out += [got] if got is not None else []
    got = writer.end()
    out += [got] if got is not None else []
    return concat_batches(out)


def test_only_the_sequence_that_starts_the_episode_learns_its_burn_in_steps():
    seqs = episode_sequences(12)
    batch = to_torch(uniform_sample(seqs), torch.device("cpu"))
    starts = episode_starts(batch)
    assert starts.tolist() == [True] + [False] * (len(seqs) - 1)
    learn = learn_mask(batch, BURN)  # [T, B]
    # the first sequence covers steps 0..9 of the episode: every one is learned
    assert learn[:, 0].tolist() == batch.mask[:, 0].tolist()
    assert learn[:BURN, 0].all()
    # the others learn only after their burn-in
    assert not learn[:BURN, 1:].any()
    assert torch.equal(learn[BURN:, 1:], batch.mask[BURN:, 1:])
    # every step of the episode is learned by some sequence (the old rule missed 0..3)
    first = seqs.obs["obs"][:, 0, 0].astype(int)  # episode step of each sequence's start
    learned = {int(first[b]) + t for t, b in zip(*np.nonzero(learn.numpy()))}
    assert learned == set(range(12))


def network(seed: int = 0) -> RecurrentQNetwork:
    torch.manual_seed(seed)
    return RecurrentQNetwork({"obs": Leaf("vector", (2,))}, 2, hidden=8, lstm=8)


def test_fresh_rows_give_the_same_values_and_a_gradient_through_their_burn_in():
    seqs = episode_sequences(12)
    batch = to_torch(uniform_sample(seqs), torch.device("cpu"))
    net = network()
    plain = net(batch.obs, batch.prev_action, batch.prev_reward, batch.state).q
    out = unroll(net, batch, BURN)
    assert torch.allclose(out.q, plain, atol=1e-6)  # same values, whichever way computed
    # the starting sequence's burn-in steps carry a gradient; the others' do not
    x = {"obs": batch.obs["obs"].clone().requires_grad_(True)}
    out = unroll(net, batch._replace(obs=x), BURN)
    out.q[:BURN].sum().backward()
    g = x["obs"].grad
    assert g[:BURN, 0].abs().sum() > 0
    assert g[:, 1:].abs().sum() == 0


def test_r2d2_loss_learns_the_first_steps_of_an_episode():
    class View:
        def __init__(self, cfg):
            self.cfg = cfg
            self.networks = {"main": network(0)}
            self.targets = {"main": network(1)}
            self.device = torch.device("cpu")

        network = property(lambda self: self.networks["main"])
        target = property(lambda self: self.targets["main"])

    class Cfg:
        burn_in, discount, n_step, value_rescaling, rescale_eps = BURN, 0.99, 3, True, 1e-3

    batch: TorchBatch = to_torch(uniform_sample(episode_sequences(12)), torch.device("cpu"))
    out: LossOutput = r2d2_loss(View(Cfg), batch, Cfg)
    assert out.learn_mask[:BURN, 0].all() and not out.learn_mask[:BURN, 1:].any()
    assert (out.td_abs[:BURN, 0] > 0).all()


def test_demo_steps_keep_a_short_episode_whole():
    """A demo shorter than the burn-in plus one period (a MiniGrid demo is 11-24 steps):
    its first sequence is kept and learned from step 0."""
    seqs = episode_sequences(5, extras=True)
    kept = keep_demo_steps(seqs, np.ones(5, bool), BURN)
    assert kept is not None and len(kept) >= 1
    batch = to_torch(uniform_sample(kept), torch.device("cpu"))
    assert int(learn_mask(batch, BURN).sum()) >= 5

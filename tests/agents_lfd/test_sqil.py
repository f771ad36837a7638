"""SQIL: relabelled rewards (demo 1, agent 0), the loss uses them, half the batch is demos."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
import torch

from agents.core.logger import read_metrics
from agents.r2d2.learning import r2d2_loss
from agents.sqil import SQILConfig, sqil_loss, sqil_rewards, train_sqil

from .conftest import TINY
from .helpers import fake_sequences, make_learner, torch_batch


def test_sqil_rewards_are_one_for_demo_steps_and_zero_otherwise():
    # agent replay, demo replay, episode memory, demo replay
    is_demo = torch.tensor([False, True, False, True])
    mask = torch.tensor([[1, 1, 1, 1], [1, 0, 1, 1], [0, 0, 0, 1]], dtype=torch.bool)
    want = torch.tensor([[0, 1, 0, 1], [0, 0, 0, 1], [0, 0, 0, 1]], dtype=torch.float32)
    torch.testing.assert_close(sqil_rewards(is_demo, mask), want)


def test_sqil_loss_learns_from_relabelled_rewards_only():
    cfg = SQILConfig(demos=("x",), burn_in=1, trace=4, n_step=2, hidden=8, lstm=8)
    seqs = fake_sequences(4, 6)
    source = np.array([0, 1, 0, 1])
    learner = make_learner(cfg, partial(sqil_loss, cfg=cfg), recurrent=True)
    batch = torch_batch(seqs, source)
    out = sqil_loss(learner, batch, cfg)
    relabelled = batch._replace(reward=sqil_rewards(batch.is_demo, batch.mask))
    torch.testing.assert_close(out.loss, r2d2_loss(learner, relabelled, cfg).loss)
    # env rewards play no part: scaling them changes nothing
    louder = batch._replace(reward=batch.reward * 100.0)
    torch.testing.assert_close(sqil_loss(learner, louder, cfg).loss, out.loss)
    assert out.metrics["sqil_demo_share"] == 0.5


def test_sqil_end_to_end_half_demo_batches(tmp_path, cartpole_demos):
    run = tmp_path / "sqil"
    cfg = SQILConfig(**TINY, burn_in=2, trace=6, period=3, demos=(cartpole_demos,),
                     total_env_steps=1200, eval_every=600, run_dir=run)  # fmt: skip
    assert cfg.demo_ratio == 0.5
    result = train_sqil(cfg)
    assert result.updates > 100
    rows = [r for r in read_metrics(run) if r["kind"] == "train"]
    assert rows and np.mean([r["demo_share"] for r in rows]) == pytest.approx(0.5, abs=0.1)
    assert [r for r in read_metrics(run) if r["kind"] == "eval"]
    from agents.core.restore import restore_agent

    assert restore_agent(run).algo == "sqil"

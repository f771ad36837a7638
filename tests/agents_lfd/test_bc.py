"""Behaviour cloning: the episode split, early stopping, the loss, end-to-end runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from agents.bc import BCConfig, EarlyStopping, bc_loss, split_episodes, train_bc
from agents.core.demos import DemoSet
from agents.core.logger import read_metrics
from demostudio.cli import main

from .helpers import fake_sequences, tiny_policy_network, torch_batch

BC_TINY = dict(env="CartPole-v1", hidden=16, lstm=16, batch_size=8, trace=10, period=10,
               progress=False, tensorboard=False, device="cpu", eval_episodes=1)  # fmt: skip


def _demo_set(n: int) -> DemoSet:
    return DemoSet([Path(f"ep{i}.h5") for i in range(n)], [f"episode {i}" for i in range(n)])


def test_split_holds_out_whole_episodes():
    for n, frac, n_val in [(5, 0.2, 1), (10, 0.3, 3), (2, 0.2, 1), (2, 0.9, 1), (3, 0.0, 0)]:
        split = split_episodes(_demo_set(n), frac, seed=0)
        assert len(split.val.paths) == n_val and len(split.train.paths) == n - n_val
        assert not set(split.val.paths) & set(split.train.paths)
        # each path stays paired with its own episode
        for p, e in zip(
            split.train.paths + split.val.paths, split.train.episodes + split.val.episodes
        ):
            assert e == f"episode {p.stem[2:]}"
    single = split_episodes(_demo_set(1), 0.5, seed=0)
    assert single.val.paths == [] and len(single.train.paths) == 1
    a, b = split_episodes(_demo_set(10), 0.3, 1), split_episodes(_demo_set(10), 0.3, 1)
    assert a.val.paths == b.val.paths  # seeded


def test_early_stopping_counts_rounds_without_improvement():
    stop = EarlyStopping(patience=2, min_delta=0.1)
    assert stop.update(1.0) and not stop.should_stop
    assert not stop.update(0.95) and not stop.should_stop  # not better by more than 0.1
    assert stop.update(0.8) and stop.bad_rounds == 0 and stop.best == 0.8
    assert not stop.update(0.9) and not stop.update(0.85)
    assert stop.should_stop
    never = EarlyStopping(patience=0)
    for v in (1.0, 2.0, 3.0):
        never.update(v)
    assert not never.should_stop


def test_bc_loss_is_cross_entropy_on_learned_steps():
    seqs = fake_sequences(3, 5)
    batch = torch_batch(seqs, np.zeros(3, np.int64))
    net = tiny_policy_network()
    out = bc_loss(net, batch, burn_in=0)
    with torch.no_grad():
        logits = net(batch.obs, batch.prev_action, batch.prev_reward, batch.state).heads["logits"]
    logp = torch.log_softmax(logits, -1).gather(-1, batch.action.unsqueeze(-1)).squeeze(-1)
    m = batch.mask.float()
    assert float(out.loss.detach()) == pytest.approx(float(-(logp * m).sum() / m.sum()), rel=1e-5)
    assert float(out.steps) == 12  # 3 sequences x 4 learned steps
    # recurrent with burn-in: only the steps after the burn-in count
    rec = tiny_policy_network(recurrent=True)
    assert float(bc_loss(rec, batch, burn_in=2).steps) == 6


def test_bc_early_stops_and_keeps_the_best_weights(tmp_path, cartpole_demos):
    run = tmp_path / "bc"
    cfg = BCConfig(**BC_TINY, demos=(cartpole_demos,), val_every=5, patience=2, min_delta=10.0,
                   max_updates=500, eval_every=0, run_dir=run)  # fmt: skip
    result = train_bc(cfg)
    # the first validation is the best; two more without a 10.0 improvement stop the run
    assert result.updates == 15 and result.env_steps == 0
    rows = read_metrics(run)
    split = next(r for r in rows if r["kind"] == "split")
    assert split["train_episodes"] == 1 and split["val_episodes"] == 1
    vals = [r for r in rows if r["kind"] == "val"]
    assert [r["updates"] for r in vals] == [5, 10, 15]
    final = [r for r in rows if r["kind"] == "eval"][-1]
    assert final["stopped_early"] == 1.0 and final["best_val_loss"] == vals[0]["val_loss"]
    payload = torch.load(run / "checkpoints" / "final.pt", weights_only=True)
    assert payload["algo"] == "bc" and payload["counters"]["updates"] == 15


def test_bc_learns_cartpole_from_demos_end_to_end(tmp_path, cartpole_demos, capsys):
    run = tmp_path / "bc-cli"
    rc = main(["train", "bc", "--env", "CartPole-v1", "--demos", str(cartpole_demos),
               "--hidden", "32", "--max-updates", "300", "--val-every", "50", "--eval-every",
               "150", "--eval-episodes", "1", "--no-progress", "--no-tensorboard", "--device",
               "cpu", "--run-dir", str(run)])  # fmt: skip
    assert rc == 0
    out = capsys.readouterr().out
    assert "bc: 0 env steps" in out
    rows = read_metrics(run)
    vals = [r for r in rows if r["kind"] == "val"]
    assert max(r["val_accuracy"] for r in vals) > 0.75  # the held-out episode's actions
    evals = [r for r in rows if r["kind"] == "eval"]
    assert len(evals) >= 2 and evals[-1]["eval_return"] > 100  # random play: about 20
    assert main(["evaluate", str(run), "--episodes", "1", "--device", "cpu"]) == 0
    rec = tmp_path / "rec"
    assert main(["watch", str(run), "--headless", "--record", str(rec), "--episodes", "1",
                 "--device", "cpu"]) == 0  # fmt: skip
    assert len(list((rec / "CartPole-v1").glob("*.h5"))) == 1
    png = tmp_path / "bc.png"
    assert main(["plot", str(run), "--out", str(png)]) == 0
    # user errors
    assert main(["train", "bc", "--env", "CartPole-v1", "--demos", str(cartpole_demos),
                 "--burn-in", "3", "--run-dir", str(tmp_path / "x")]) == 2  # fmt: skip
    assert main(["train", "bc", "--env", "CartPole-v1", "--demos", str(cartpole_demos),
                 "--run-dir", str(run)]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "--burn-in: expected 0 for a feed-forward policy" in err
    assert "expected a fresh run folder" in err


def test_recurrent_bc_with_burn_in(tmp_path, cartpole_demos):
    run = tmp_path / "rbc"
    cfg = BCConfig(**BC_TINY, demos=(cartpole_demos,), recurrent=True, burn_in=4,
                   max_updates=150, val_every=50, eval_every=0, state_refresh_every=100,
                   run_dir=run)  # fmt: skip
    result = train_bc(cfg)
    assert result.updates == 150
    from agents.core.restore import restore_agent

    agent = restore_agent(run)
    assert agent.controller._policy.network.recurrent

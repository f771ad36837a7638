"""--demos: behaviour cloning on the demo segments before the first rollout (a phase of its
own, with its checkpoint and evaluation), and the optional BC loss annealed to zero."""

from __future__ import annotations

import json

import pytest

from agents.core.checkpoint import load_checkpoint
from agents.registry import get_algorithm
from tests.agents_rnd_ppo.helpers import tiny


@pytest.fixture(scope="module")
def demos(tmp_path_factory, record_demos):
    return record_demos(tmp_path_factory.mktemp("demos"), "CartPole-v1", 2)


def rows(run_dir, kind):
    lines = (run_dir / "metrics.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r["kind"] == kind]


def test_pretraining_clones_the_demonstrator(tmp_path, demos):
    # stop_when off: the cloned policy plays as well as the demos at once, and this test
    # follows the run on past that
    cfg = tiny(tmp_path / "run", demos=(demos,), bc_pretrain_updates=150, bc_batch_size=8,
               lr_policy=3e-3, hidden=32, lstm=32, eval_every=1, eval_episodes=2,
               stop_when="off")  # fmt: skip
    result = get_algorithm("rnd-ppo").train(cfg)
    pre = rows(result.run_dir, "pretrain")
    assert pre[0]["updates"] < pre[-1]["updates"] == 150
    assert pre[-1]["bc_loss"] < 0.5 * pre[0]["bc_loss"]
    assert pre[-1]["bc_accuracy"] > 0.85
    # the evaluation at the end of pre-training plays the cloned policy: the scripted
    # demonstrator balances the pole for long, a random policy for ~20 steps
    first_eval = rows(result.run_dir, "eval")[0]
    assert first_eval["env_steps"] == 0 and first_eval["eval_return"] > 100
    assert (result.run_dir / "checkpoints" / "pretrained.pt").exists()
    payload = load_checkpoint(result.run_dir / "checkpoints" / "final.pt")
    assert payload["counters"]["env_steps"] >= 96 and payload["updates"] > 150


def test_annealed_bc_loss_on_demo_segments(tmp_path, demos):
    cfg = tiny(tmp_path / "run", intrinsic=False, demos=(demos,), bc_pretrain_updates=0,
               bc_coef=1.0, bc_anneal_steps=128, total_env_steps=160)  # fmt: skip
    result = get_algorithm("ppo").train(cfg)
    train = rows(result.run_dir, "train")
    assert rows(result.run_dir, "pretrain") == []
    coefs = [r["bc_coef"] for r in train if "bc_coef" in r]
    assert len(coefs) >= 3 and coefs[0] > 0.7 and coefs == sorted(coefs, reverse=True)
    assert "bc_coef" not in train[-1]  # annealed to zero: no BC term any more


def test_without_demos_no_bc(tmp_path):
    result = get_algorithm("ppo").train(tiny(tmp_path / "run", intrinsic=False, bc_coef=1.0))
    assert all("bc_loss" not in r for r in rows(result.run_dir, "train"))

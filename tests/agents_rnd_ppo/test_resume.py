"""Automatic resume: a run folder with checkpoints is continued with every piece as saved
(networks, the frozen target, the optimiser's moments, the observation and intrinsic-return
statistics, the counters); an empty one starts fresh; --no-resume refuses to overwrite."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from agents.core.checkpoint import CheckpointError, load_checkpoint
from agents.registry import get_algorithm
from tests.agents_rnd_ppo.helpers import tiny


def same(a, b, where="") -> None:
    """Deep equality of checkpoint payload parts (tensors compared exactly)."""
    if isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor) and torch.equal(a, b), where
    elif isinstance(a, dict):
        assert set(a) == set(b), where
        for k in a:
            same(a[k], b[k], f"{where}/{k}")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same(x, y, f"{where}[{i}]")
    else:
        assert a == b, where


PIECES = ("networks", "optimizer", "agent_state", "counters", "updates")


def test_resume_restores_every_piece(tmp_path):
    train = get_algorithm("rnd-ppo").train
    cfg = tiny(tmp_path / "run", env="MiniGrid-Empty-5x5-v0")
    first = train(cfg)
    saved = load_checkpoint(first.run_dir / "checkpoints" / "final.pt")
    assert saved["agent_state"]["obs_norm"]["count"] > 0
    assert saved["optimizer"]["state"], "the optimiser has moments to restore"
    # resume (the default) with nothing left to do: the run saves what it loaded
    again = train(dataclasses.replace(cfg))
    assert again.env_steps == first.env_steps and again.updates == first.updates
    resaved = load_checkpoint(first.run_dir / "checkpoints" / "final.pt")
    for piece in PIECES:
        same(saved[piece], resaved[piece], piece)
    # and it continues from there
    longer = train(dataclasses.replace(cfg, total_env_steps=160))
    assert longer.env_steps >= 160 and longer.updates > first.updates
    after = load_checkpoint(first.run_dir / "checkpoints" / "final.pt")
    assert after["agent_state"]["obs_norm"]["count"] > saved["agent_state"]["obs_norm"]["count"]
    same(saved["networks"]["rnd_target"], after["networks"]["rnd_target"], "target")


def test_resume_is_on_by_default_and_no_resume_refuses(tmp_path):
    cfg = tiny(tmp_path / "run", intrinsic=False)
    assert cfg.resume  # the source's behaviour
    get_algorithm("ppo").train(cfg)  # an empty folder: a fresh run
    with pytest.raises(CheckpointError, match="leave out --no-resume"):
        get_algorithm("ppo").train(dataclasses.replace(cfg, resume=False))


def test_cli_resumes_with_the_saved_config(tmp_path, capsys):
    from demostudio.cli import main

    run = tmp_path / "cli"
    base = ["train", "ppo", "--env", "CartPole-v1", "--run-dir", str(run), "--no-progress",
            "--no-tensorboard", "--eval-every", "0", "--num-envs", "2", "--rollout-length", "8",
            "--segment-length", "8", "--num-minibatches", "1", "--hidden", "8",
            "--lstm", "8"]  # fmt: skip
    assert main([*base, "--total-env-steps", "16"]) == 0
    capsys.readouterr()
    # the second call gives only the new budget: the saved config (hidden 8) is reused
    assert main(["train", "ppo", "--env", "CartPole-v1", "--run-dir", str(run),
                 "--total-env-steps", "32", "--no-progress"]) == 0  # fmt: skip
    assert "ppo: 3" in capsys.readouterr().out
    payload = load_checkpoint(run / "checkpoints" / "final.pt")
    assert payload["config"]["hidden"] == 8 and payload["counters"]["env_steps"] >= 32

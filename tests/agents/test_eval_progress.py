"""Every long phase of a run shows progress with an ETA: the training bar, and a bar per
evaluation and per deployment-gate test counting its episodes."""

from __future__ import annotations

import re

from agents.r2d2 import R2D2Config, train_r2d2

TINY = dict(
    env="CartPole-v1", num_actors=2, hidden=16, lstm=16, burn_in=2, trace=6, period=3,
    batch_size=8, min_replay=8, env_steps_per_update=8.0, eval_every=300, eval_episodes=3,
    total_env_steps=600, tensorboard=False, device="cpu", stop_when="off",
)  # fmt: skip


def test_evaluations_and_gate_tests_count_their_episodes_with_an_eta(tmp_path, capsys):
    train_r2d2(R2D2Config(**TINY, progress=True, gate_episodes=2, run_dir=tmp_path / "run"))
    err = capsys.readouterr().err
    assert re.search(r"evaluating @ 3\d\d env steps: +\d+%", err)
    assert re.search(r"gate test @ 3\d\d env steps: +\d+%", err)
    assert "/3 [" in err and "episode/s]" in err  # tqdm's count, elapsed<remaining, rate


def test_no_bar_without_progress(tmp_path, capsys):
    train_r2d2(R2D2Config(**TINY, progress=False, run_dir=tmp_path / "quiet"))
    assert "evaluating @" not in capsys.readouterr().err

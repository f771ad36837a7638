"""Learning checks that take minutes: excluded from the default run (``-m slow``)."""

from __future__ import annotations

import pytest

from agents.r2d2 import R2D2Config, train_r2d2
from agents.r2d3 import R2D3Config, train_r2d3


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_r2d2_cartpole_learns(tmp_path):
    cfg = R2D2Config(
        env="CartPole-v1",
        total_env_steps=100_000,
        eval_every=5000,
        stop_return=475.0,
        run_dir=tmp_path / "run",
        progress=False,
        tensorboard=False,
    )
    result = train_r2d2(cfg)
    assert max(r for _, r in result.evals) >= 200.0


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_r2d3_mountaincar_with_one_demo_reaches_minus_120_within_10k(tmp_path, mountaincar_demos):
    """R2D3's MountainCar target at its defaults (3 seeds: first at 5k, 5k and 7.5k env steps)."""
    cfg = R2D3Config(
        env="MountainCar-v0",
        demos=(mountaincar_demos,),
        total_env_steps=10_000,
        eval_every=2500,
        stop_return=-120.0,
        run_dir=tmp_path / "run",
        progress=False,
        tensorboard=False,
    )
    result = train_r2d3(cfg)
    assert max(r for _, r in result.evals) >= -120.0

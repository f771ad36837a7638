"""A run stops once it has learned: --stop-when's target (the demos' mean return, the env's
reward threshold, or a given --stop-return), stated on the console and in metrics.jsonl; the
budget is the cap, and --stop-when off runs it all."""

from __future__ import annotations

import pytest

from agents.core.logger import read_metrics
from agents.core.stop_rule import StopRule, stop_rule
from agents.r2d3 import R2D3Config, train_r2d3
from demostudio.cli import main
from demostudio.cli.record_cmd import RecordConfig, record

TINY = dict(
    env="MountainCar-v0",
    num_actors=2,
    hidden=16,
    lstm=16,
    burn_in=2,
    trace=6,
    period=3,
    batch_size=8,
    min_replay=8,
    env_steps_per_update=8.0,
    eval_every=400,
    eval_episodes=1,
    total_env_steps=1600,
    progress=False,
    tensorboard=False,
    device="cpu",
)


@pytest.fixture(scope="module")
def random_demos(tmp_path_factory):
    """Two random MountainCar episodes: each returns -200, the least any episode can, so the
    first evaluation of any agent is at or above the demos' mean."""
    root = tmp_path_factory.mktemp("demos")
    cfg = RecordConfig(env="MountainCar-v0", episodes=2, out=root, seed=0, frames=False,
                       policy="random")  # fmt: skip
    saved = record(cfg, progress=False)
    return saved[0].parent


def test_the_rule_comes_from_the_return_the_demos_or_the_env(random_demos):
    given = stop_rule("auto", 10.0, 2, [random_demos], "MountainCar-v0")
    assert given == StopRule(10.0, 2, "--stop-return")
    demos = stop_rule("auto", None, 1, [random_demos], "MountainCar-v0")
    assert demos.target == -200.0 and "demos' mean return" in demos.source
    threshold = stop_rule("auto", None, 1, (), "CartPole-v1")
    assert threshold.target == 475.0 and "reward threshold" in threshold.source
    assert stop_rule("threshold", None, 1, [random_demos], "MountainCar-v0").target == -110.0
    assert stop_rule("off", None, 1, [random_demos], "CartPole-v1") is None
    assert stop_rule("auto", None, 1, (), "MiniGrid-DoorKey-8x8-v0") is None  # neither: no rule
    with pytest.raises(ValueError, match="--stop-when demos: expected --demos"):
        stop_rule("demos", None, 1, (), "CartPole-v1")
    with pytest.raises(ValueError, match=r"--stop-when threshold: .* has no reward threshold"):
        stop_rule("threshold", None, 1, (), "MiniGrid-DoorKey-8x8-v0")


def test_the_rule_holds_for_the_mean_of_the_last_evaluations():
    rule = StopRule(-120.0, 2, "x")
    assert not rule.reached([-110.0])  # one evaluation of the two asked for
    assert not rule.reached([-200.0, -130.0, -115.0])  # mean -122.5
    assert rule.reached([-200.0, -125.0, -110.0])  # mean -117.5


def test_a_run_with_demos_stops_once_it_plays_as_well_as_they_do(random_demos, tmp_path):
    res = train_r2d3(R2D3Config(**TINY, demos=(random_demos,), run_dir=tmp_path / "auto"))
    assert res.solved_at == res.env_steps < TINY["total_env_steps"]
    assert res.stop_rule is not None and res.stop_rule.target == -200.0
    rows = read_metrics(tmp_path / "auto")
    said = [r for r in rows if r["kind"] == "stop_rule"]
    assert said and said[0]["stop_target"] == -200.0 and "demos" in said[0]["stop_source"]


def test_stop_when_off_runs_the_whole_budget(random_demos, tmp_path):
    cfg = R2D3Config(**TINY, demos=(random_demos,), run_dir=tmp_path / "off", stop_when="off")
    res = train_r2d3(cfg)
    assert res.solved_at is None and res.stop_rule is None
    assert res.env_steps >= TINY["total_env_steps"]
    assert not [r for r in read_metrics(tmp_path / "off") if r["kind"] == "stop_rule"]


def test_the_console_says_when_the_run_learned(random_demos, tmp_path, capsys):
    flags = [
        "--hidden", "16", "--lstm", "16", "--burn-in", "2", "--trace", "6", "--period", "3",
        "--batch-size", "8", "--min-replay", "8", "--env-steps-per-update", "8",
        "--eval-every", "400", "--eval-episodes", "1", "--total-env-steps", "1600",
        "--no-progress", "--no-tensorboard", "--device", "cpu",
    ]  # fmt: skip
    run = tmp_path / "cli"
    rc = main(["train", "r2d3", "--env", "MountainCar-v0", "--demos", str(random_demos),
               "--run-dir", str(run), *flags])  # fmt: skip
    assert rc == 0
    out = capsys.readouterr().out
    assert "learned: an evaluation's mean return reaches -200" in out
    assert "the run stopped there" in out

"""The agent against the person: ``plot --demos`` draws the demos' returns (one band per
player) on the learning-curve axes; ``compare`` reports the share of the demos' return and
the human-normalised score against a random policy measured in the same comparison."""

from __future__ import annotations

import json
import math
from pathlib import Path

import matplotlib.image
import numpy as np
import pytest

from agents.compare import RandomPolicy, Reference, RunSummary, markdown_table, random_return
from agents.core.plotting import demo_returns, plot_runs
from demostudio.cli import main
from demostudio.controllers import scripted_controller
from demostudio.episode import RecordEpisodes, make_env


@pytest.fixture(scope="module")
def two_players(tmp_path_factory) -> Path:
    """CartPole demos of two players: ann (2 episodes of 60 steps), bo (1 of 25 steps)."""
    root = tmp_path_factory.mktemp("players")
    for player, lengths in (("ann", (60, 60)), ("bo", (25,))):
        rec = RecordEpisodes(
            make_env("CartPole-v1"), root / "CartPole-v1", controller="keyboard",
            player=player, record_frames=False,
        )  # fmt: skip
        ctrl = scripted_controller("CartPole-v1")
        for i, n in enumerate(lengths):
            obs, _ = rec.reset(seed=i)
            for _ in range(n):
                obs, *_ = rec.step(ctrl.act(rec, obs))
            rec.end_episode()
        rec.close()
    return root


@pytest.fixture
def run_dir(tmp_path) -> Path:
    """A run folder whose evaluations climbed from 10 to 50."""
    run = tmp_path / "r2d3-CartPole-v1-s0"
    run.mkdir()
    rows = [{"kind": "eval", "env_steps": s, "eval_return": r} for s, r in
            ((0, 10.0), (1000, 30.0), (2000, 50.0))]  # fmt: skip
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return run


def test_demo_returns_one_group_per_player(two_players):
    groups = demo_returns([two_players])
    assert [(g.player, g.returns) for g in groups] == [("ann", [60.0, 60.0]), ("bo", [25.0])]
    assert groups[0].label == "demos of ann: mean 60.0, 60.0 to 60.0 (2 episodes)"
    assert groups[1].label == "demos of bo: mean 25.0 (1 episode)"


def _pixels(png: Path) -> np.ndarray:
    return (matplotlib.image.imread(png)[..., :3] * 255).round().astype(int)


def test_plot_draws_the_demo_band_on_the_learning_curve_axes(run_dir, two_players, tmp_path):
    plain, banded = tmp_path / "plain.png", tmp_path / "banded.png"
    assert main(["plot", str(run_dir), "--out", str(plain)]) == 0
    assert main(["plot", str(run_dir), "--demos", str(two_players), "--out", str(banded)]) == 0
    a, b = _pixels(plain), _pixels(banded)
    assert a.shape == b.shape and (a != b).any(axis=-1).mean() > 0.05  # a visible band
    # the bands are pale tints of the players' colours: many pixels no plain plot has
    tints = {tuple(p) for p in b.reshape(-1, 3)} - {tuple(p) for p in a.reshape(-1, 3)}
    assert len(tints) > 3


def test_plot_demos_need_a_return_metric(run_dir, two_players, tmp_path, capsys):
    with pytest.raises(ValueError, match="--demos: expected a return metric"):
        plot_runs([run_dir], tmp_path / "x.png", "loss", demos=[two_players])
    assert main(["plot", str(run_dir), "--demos", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert "none" in err and len(err.strip().splitlines()) == 1


def test_reference_scores_by_hand():
    ref = Reference(demos=-110.0, random=-200.0)  # MountainCar-like: negative returns
    assert ref.normalised(-130.0) == pytest.approx(70 / 90)
    assert ref.normalised(-200.0) == 0.0 and ref.normalised(-110.0) == 1.0
    assert math.isnan(ref.share(-130.0))  # no share of a negative return
    pos = Reference(demos=200.0, random=20.0)
    assert pos.share(150.0) == 0.75 and pos.normalised(150.0) == pytest.approx(130 / 180)
    assert math.isnan(Reference(demos=10.0, random=10.0).normalised(5.0))


def test_table_adds_share_and_normalised_score():
    rows = [RunSummary("dqfd", s, f, None, 1.0, 100, 1, [(0, f)], "x") for s, f in
            ((0, 100.0), (1, 140.0))]  # fmt: skip
    table = markdown_table(rows, ["dqfd"], 150.0, Reference(200.0, 20.0)).splitlines()
    assert table[0].endswith("| share of demo return | human-normalised |")
    assert table[2].endswith("| 0.60 | 0.56 |")  # 120 / 200; (120 - 20) / 180


def test_random_policy_is_measured_and_seeded():
    first = random_return("CartPole-v1", 5, 1_000_000)
    assert first == random_return("CartPole-v1", 5, 1_000_000)
    assert 8 < first < 60  # a random CartPole policy lasts about 20 steps
    assert RandomPolicy(3).act(make_env("CartPole-v1"), None) in (0, 1)

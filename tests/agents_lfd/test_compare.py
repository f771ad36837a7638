"""``demostudio compare``: run plan and configs, the table, the PNG, resuming, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.compare import (
    RunSpec,
    RunSummary,
    build_config,
    markdown_table,
    parse_overrides,
    read_results,
)
from demostudio.cli import main
from demostudio.cli.compare_cmd import CompareConfig


def _spec(algo: str, overrides: dict | None = None) -> RunSpec:
    return RunSpec(algo, 3, "CartPole-v1", ("demos",), 5000, 1000, 2, 4, overrides or {},
                   "/tmp/run", "cpu", 475.0)  # fmt: skip


def test_build_config_sets_only_what_each_algorithm_has():
    r2d2 = build_config(_spec("r2d2", {"*": {"num_actors": 2, "val_every": 7}}))
    assert r2d2.total_env_steps == 5000 and r2d2.seed == 3 and r2d2.num_actors == 2
    assert not hasattr(r2d2, "demos")  # R2D2 learns without demos
    bc = build_config(_spec("bc", {"*": {"num_actors": 2, "val_every": 7}}))
    assert bc.demos == (Path("demos"),) and bc.val_every == 7 and not hasattr(bc, "num_actors")
    dqfd = build_config(_spec("dqfd", {"dqfd": {"pretrain_updates": 12}}))
    assert dqfd.pretrain_updates == 12 and dqfd.eval_every == 1000 and dqfd.eval_episodes == 2
    with pytest.raises(ValueError, match=r"sqil has no fields \['pretrain_updates'\]"):
        build_config(_spec("sqil", {"sqil": {"pretrain_updates": 1}}))


def test_parse_overrides_errors():
    assert parse_overrides('{"dqfd": {"margin": 0.5}}', ["dqfd"]) == {"dqfd": {"margin": 0.5}}
    with pytest.raises(ValueError, match="--overrides: expected JSON"):
        parse_overrides("{nope", ["dqfd"])
    with pytest.raises(ValueError, match=r"expected keys among \['dqfd', '\*'\], got \['bc'\]"):
        parse_overrides('{"bc": {}}', ["dqfd"])
    with pytest.raises(ValueError, match="--overrides: expected"):
        parse_overrides('{"dqfd": 3}', ["dqfd"])


def test_markdown_table_by_hand():
    def s(algo, seed, final, hit, wall):
        return RunSummary(algo, seed, final, hit, wall, 1000, 10, [(0, final)], "x")

    rows = [s("dqfd", 0, -110.0, 2000, 10.0), s("dqfd", 1, -130.0, None, 20.0),
            s("dqfd", 2, -120.0, 4000, 30.0), s("bc", 0, -115.0, 0, 4.0)]  # fmt: skip
    table = markdown_table(rows, ["r2d2", "dqfd", "bc"], -120.0).splitlines()
    assert table[0].startswith("| algorithm | seeds | final eval return")
    assert "env steps to >= -120" in table[0]
    assert table[2] == "| dqfd | 3 | -120.0 ± 8.2 | 3000 (2/3) | 20 |"
    assert table[3] == "| bc | 1 | -115.0 ± 0.0 | 0 (1/1) | 4 |"
    assert len(table) == 4  # no r2d2 runs: no row


def test_compare_runs_writes_table_and_png_and_resumes(tmp_path, cartpole_demos, capsys):
    out = tmp_path / "cmp"
    overrides = {"dqfd": {"pretrain_updates": 20}, "bc": {"max_updates": 60, "val_every": 20},
                 "*": {"num_actors": 2, "hidden": 16, "lstm": 16, "batch_size": 8,
                       "min_replay": 8, "trace": 6, "period": 3, "n_step": 3,
                       "env_steps_per_update": 8.0}}  # fmt: skip
    args = ["compare", "--env", "CartPole-v1", "--demos", str(cartpole_demos), "--algos",
            "dqfd", "bc", "--seeds", "1", "--first-seed", "4", "--budget", "300",
            "--eval-every", "150", "--eval-episodes", "1", "--final-eval-episodes", "2",
            "--threshold", "30", "--out", str(out),
            "--overrides", json.dumps(overrides)]  # fmt: skip
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "2 runs to do" in printed and "| dqfd | 1 |" in printed and "| bc | 1 |" in printed
    assert "| share of demo return | human-normalised |" in printed
    assert "random policy: mean return" in printed
    results = read_results(out)
    assert sorted((r.algo, r.seed) for r in results) == [("bc", 4), ("dqfd", 4)]
    dq = [r for r in results if r.algo == "dqfd"]
    assert all(r.env_steps >= 300 and r.curve[0][0] == 0 for r in dq)
    assert all(r.env_steps == 0 for r in results if r.algo == "bc")
    assert (out / "results.md").read_text().startswith("# CartPole-v1: dqfd, bc")
    assert (out / "learning_curves.png").stat().st_size > 10_000
    # a rerun skips finished runs and rewrites the same table
    assert main(args) == 0
    assert "0 runs to do (2 already done)" in capsys.readouterr().out
    assert len(read_results(out)) == 2


def test_compare_user_errors(tmp_path, cartpole_demos, capsys):
    base = ["compare", "--env", "CartPole-v1", "--out", str(tmp_path / "c")]
    assert main(base) == 2
    assert main([*base, "--demos", str(cartpole_demos), "--algos", "dqfd", "nope"]) == 2
    assert main([*base, "--demos", str(tmp_path / "none")]) == 2
    assert main([*base, "--demos", str(cartpole_demos), "--seeds", "0"]) == 2
    err = capsys.readouterr().err
    assert "--demos: expected at least one demo file or folder, got none" in err
    assert "--algos: expected names among" in err and "['nope']" in err
    assert "none: no such episode file or folder" in err
    assert "--seeds: expected >= 1, got 0" in err
    # the default compares every algorithm of the registry (no list written by hand)
    from agents.registry import algorithm_names

    assert CompareConfig().algos == ()
    assert algorithm_names() == ["bc", "dqfd", "ppo", "r2d2", "r2d3", "reactor", "rnd-ppo", "sqil"]

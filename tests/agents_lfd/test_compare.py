"""``demostudio compare``: run plan and configs, the table, the PNG, resuming, errors."""

from __future__ import annotations

import json
import shutil
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
from tests.hostile_files import make_hostile


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


GOOD_SUMMARY = {"algo": "bc", "seed": 0, "final_return": 9.0, "steps_to_threshold": None,
                "wall_s": 1.0, "env_steps": 0, "updates": 20, "curve": [[0, 9.0]],
                "run_dir": "x"}  # fmt: skip


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "kind, expected",
    [
        ("fifo", ": expected a results file of a comparison, got a special file (FIFO, device)"),
        ("folder", ": expected a results file of a comparison, got a folder"),
        ("nested", " [line 1]: expected JSON nested at most 64 deep"),
        ("text_return", " [line 1]: expected a run summary (final_return: expected int or float"),
        ("text_seed", " [line 1]: expected a run summary (seed: expected int, got '0')"),
        ("text_curve", " [line 1]: expected a run summary (curve: expected [[env steps, return]"),
        ("list_row", " [line 1]: expected a run summary (expected a JSON object, got list)"),
    ],
)
def test_hostile_results_file_is_one_line_before_any_training(kind, expected, tmp_path, capsys):
    """Before: a FIFO hung, a folder and deep nesting were tracebacks, a text seed trained
    the run again and then crashed drawing the table, a text return crashed the table."""
    out = tmp_path / "cmp"
    out.mkdir()
    path = out / "results.jsonl"
    if kind == "list_row":
        path.write_text("[1, 2]\n")
    elif not make_hostile(path, kind):
        field, value = {"text_return": ("final_return", "abc"), "text_seed": ("seed", "0"),
                        "text_curve": ("curve", [[0, "a"]])}[kind]  # fmt: skip
        path.write_text(json.dumps({**GOOD_SUMMARY, field: value}) + "\n")
    with pytest.raises(ValueError) as err:
        read_results(out)
    assert str(err.value).startswith(f"{path}{expected}")
    assert "\n" not in str(err.value)


def test_compare_never_restarts_a_run_folder_it_did_not_make(tmp_path, cartpole_demos, capsys):
    """compare deletes the checkpoints of its unfinished runs before training them again:
    with `--out .` that was the `train bc` run in runs/bc-CartPole-v1-s0, and through a linked
    run folder a run anywhere else. Now only folders with its marker are restarted."""
    args = ["compare", "--env", "CartPole-v1", "--demos", str(cartpole_demos), "--algos",
            "bc", "--seeds", "1", "--final-eval-episodes", "1", "--eval-episodes", "1",
            "--overrides", json.dumps({"bc": {"max_updates": 4, "val_every": 2, "hidden": 8,
                                              "lstm": 8, "batch_size": 4}})]  # fmt: skip
    trained = tmp_path / "trained"
    (trained / "checkpoints").mkdir(parents=True)
    (trained / "checkpoints" / "final.pt").write_bytes(b"precious weights")
    (trained / "metrics.jsonl").write_text(json.dumps({"kind": "eval", "env_steps": 0}) + "\n")
    linked = tmp_path / "linked"
    (linked / "runs").mkdir(parents=True)
    (linked / "runs" / "bc-CartPole-v1-s0").symlink_to(trained)
    assert main([*args, "--out", str(linked)]) == 2
    err = capsys.readouterr().err
    assert err.endswith("got a link (compare never deletes through a link)\n")
    assert err.count("\n") == 1
    dot = tmp_path / "dot"
    (dot / "runs").mkdir(parents=True)
    shutil.copytree(trained, dot / "runs" / "bc-CartPole-v1-s0")
    assert main([*args, "--out", str(dot)]) == 2
    assert "expected a run folder made by `demostudio compare`" in capsys.readouterr().err
    for folder in (trained, dot / "runs" / "bc-CartPole-v1-s0"):
        assert (folder / "checkpoints" / "final.pt").read_bytes() == b"precious weights"
    # its own unfinished run (marker, leftover checkpoint) is restarted, as before
    own = tmp_path / "own"
    assert main([*args, "--out", str(own)]) == 0
    run = own / "runs" / "bc-CartPole-v1-s0"
    assert (run / "compare-run.json").is_file()
    (own / "results.jsonl").unlink()  # as if interrupted before the run was recorded
    (run / "checkpoints" / "step-0000000001.pt").write_bytes(b"leftover")
    capsys.readouterr()
    assert main([*args, "--out", str(own)]) == 0
    assert "1 runs to do (0 already done)" in capsys.readouterr().out
    assert not (run / "checkpoints" / "step-0000000001.pt").exists()
    file_out = tmp_path / "file"
    file_out.write_text("mine")
    assert main([*args, "--out", str(file_out)]) == 2
    assert capsys.readouterr().err == (
        f"demostudio: error: --out {file_out}: expected a folder, got a file\n"
    )


def test_compare_that_cannot_start_leaves_nothing_it_made(tmp_path, cartpole_demos, capsys):
    """Before: demos of another env were refused only when the first run started, leaving an
    empty OUT; a first run failing to start left its folder with the compare-run.json marker.
    Now the demos' env is checked before OUT is made, and a run that fails to start removes
    what this invocation made (only that: an older marker and OUT's files stay)."""
    out = tmp_path / "c"
    args = ["compare", "--env", "MountainCar-v0", "--demos", str(cartpole_demos), "--algos",
            "bc", "--seeds", "1", "--out", str(out)]  # fmt: skip
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "[env_id]: expected demos of 'MountainCar-v0'" in err
    assert str(cartpole_demos) in err and not out.exists()
    # the env is accepted, the actions are not: the run fails to start, in the run shell
    accept = ["--overrides", json.dumps({"bc": {"demo_env_override": "CartPole-v1"}})]
    assert main([*args, *accept]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "[action_space]" in err
    assert not out.exists()
    # an OUT and a marker of an earlier invocation are left as they were
    old = out / "runs" / "bc-MountainCar-v0-s0"
    old.mkdir(parents=True)
    (old / "compare-run.json").write_text("{}\n")
    (out / "mine.txt").write_text("keep")
    assert main([*args, *accept]) == 2
    assert (old / "compare-run.json").read_text() != "" and (out / "mine.txt").exists()
    assert sorted(p.name for p in out.rglob("*")) == [
        "bc-MountainCar-v0-s0", "compare-run.json", "mine.txt", "runs"
    ]  # fmt: skip


def test_sigterm_ends_a_comparison_as_ctrl_c_does_and_a_rerun_continues(
    tmp_path, cartpole_demos, capsys, monkeypatch
):
    """``kill -TERM`` during the second run: the first stays in results.jsonl, the second is
    saved marked interrupted, the command exits 143; the same command finishes the second."""
    import os
    import signal

    import agents.core.loop as loop_module
    from agents.core.checkpoint import load_checkpoint

    out = tmp_path / "cmp"
    tiny = {"num_actors": 2, "hidden": 16, "lstm": 16, "batch_size": 8, "min_replay": 8,
            "trace": 6, "period": 3, "n_step": 3, "env_steps_per_update": 8.0,
            "checkpoint_every": 100}  # fmt: skip
    args = ["compare", "--env", "CartPole-v1", "--demos", str(cartpole_demos), "--algos",
            "r2d2", "--seeds", "2", "--first-seed", "4", "--budget", "300", "--eval-every", "0",
            "--eval-episodes", "1", "--final-eval-episodes", "1", "--threshold", "30", "--out",
            str(out), "--overrides", json.dumps({"*": tiny})]  # fmt: skip
    prune = loop_module.prune_checkpoints

    def kill_in_second_run(run_dir, keep):
        if run_dir.name.endswith("-s5"):
            os.kill(os.getpid(), signal.SIGTERM)
        return prune(run_dir, keep)

    monkeypatch.setattr(loop_module, "prune_checkpoints", kill_in_second_run)
    assert main(args) == 143
    captured = capsys.readouterr()
    assert captured.err.strip().splitlines() == ["demostudio: interrupted"]
    assert captured.out.strip().splitlines()[-1] == (
        f"compare interrupted: 1 finished run kept in {out / 'results.jsonl'}; the same "
        "command continues with the others"
    )
    assert [(r.algo, r.seed) for r in read_results(out)] == [("r2d2", 4)]
    second = out / "runs" / "r2d2-CartPole-v1-s5" / "checkpoints" / "final.pt"
    assert load_checkpoint(second)["interrupted"] is True
    stopped_at = load_checkpoint(second)["counters"]["env_steps"]
    assert 0 < stopped_at < 300
    monkeypatch.undo()
    assert main(args) == 0
    out_text = capsys.readouterr().out
    assert "1 runs to do (1 already done)" in out_text
    assert "; 1 interrupted run continues from its latest checkpoint" in out_text
    assert sorted((r.algo, r.seed) for r in read_results(out)) == [("r2d2", 4), ("r2d2", 5)]
    assert load_checkpoint(second)["interrupted"] is False
    metrics = (second.parent.parent / "metrics.jsonl").read_text().splitlines()
    steps = [json.loads(line)["env_steps"] for line in metrics]
    assert steps[0] <= stopped_at  # the rows before the stop are kept: it continued


def test_restart_starts_an_interrupted_run_again(tmp_path, cartpole_demos, capsys, monkeypatch):
    """``--restart``, or a plan that changed since the run was interrupted, trains it from
    nothing: its checkpoints and metrics go."""
    from agents.compare import RUN_MARKER, continue_or_clear, plan_runs
    from demostudio.cli.compare_cmd import CompareConfig

    cfg = CompareConfig(env="CartPole-v1", algos=("r2d2",), seeds=1, out=tmp_path / "c")
    (spec,) = plan_runs(cfg, 30.0)
    run = Path(spec.run_dir)
    (run / "checkpoints").mkdir(parents=True)

    def interrupted(marker_spec: dict) -> None:
        (run / RUN_MARKER).write_text(json.dumps(marker_spec))
        (run / "checkpoints" / "step-0000000100.pt").write_bytes(b"weights")
        (run / "metrics.jsonl").write_text("{}\n")

    interrupted(spec.planned())
    assert continue_or_clear(spec, restart=False).resume is True
    assert (run / "checkpoints" / "step-0000000100.pt").exists()
    assert continue_or_clear(spec, restart=True).resume is False
    assert not (run / "checkpoints" / "step-0000000100.pt").exists()
    assert not (run / "metrics.jsonl").exists()
    interrupted({**spec.planned(), "budget": 1})  # another plan: its steps mean nothing here
    assert continue_or_clear(spec, restart=False).resume is False
    assert not (run / "checkpoints" / "step-0000000100.pt").exists()


def test_each_finished_run_says_how_many_are_done_and_about_how_long_the_rest_take():
    from agents.compare import time_left

    walls = {"r2d3": [100.0, 140.0], "bc": [10.0]}
    # two r2d3 runs at their mean (120 s) and one reactor run at the mean of all (83.3 s)
    assert time_left(walls, ["r2d3", "r2d3", "reactor"], jobs=1) == ", about 5 min left"
    assert time_left(walls, ["bc"], jobs=1) == ", about 10 s left"
    assert time_left(walls, ["r2d3", "r2d3"], jobs=2) == ", about 2 min left"
    assert time_left(walls, [], jobs=1) == ""

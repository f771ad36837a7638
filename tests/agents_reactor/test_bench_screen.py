"""benchmarks/bench_reactor_screen.py: runs stop at their first dip after a first 475, and
the screen stops with them; real child processes write scripted metrics."""

from __future__ import annotations

import sys
import time

import pytest

SCRIPT = r"""
import json, sys, time
from pathlib import Path
seed, work = int(sys.argv[1]), Path(sys.argv[2])
curves = {0: [100, 480, 500], 1: [500, 300], 2: [100, 200], 3: [], 4: [100]}
run = work / "runs" / "r"
run.mkdir(parents=True)
with open(run / "metrics.jsonl", "w") as f:
    f.write(json.dumps({"kind": "train", "env_steps": 1}) + "\n")
    for i, value in enumerate(curves[seed]):
        f.write(json.dumps({"kind": "eval", "env_steps": i + 1, "eval_return": value}) + "\n")
        f.flush()
    if seed == 4:
        time.sleep(120)  # a run still going when another dips is stopped with it
    if seed == 1:
        time.sleep(120)  # a dipped run is stopped, not waited for: this row never comes
        f.write(json.dumps({"kind": "eval", "env_steps": 3, "eval_return": 500}) + "\n")
if seed == 3:
    sys.exit("boom: the run failed")
"""


def fake(seed, work):
    return [sys.executable, "-c", SCRIPT, str(seed), str(work)]


def test_first_dip_finds_the_first_fall_after_the_first_475(benchmark_script):
    first_dip = benchmark_script("bench_reactor_screen").first_dip
    assert first_dip([]) == (None, None)
    assert first_dip([(1, 100.0), (2, 474.9)]) == (None, None)
    assert first_dip([(1, 100.0), (2, 475.0), (3, 500.0)]) == (1, None)
    assert first_dip([(1, 500.0), (2, 100.0), (3, 500.0), (4, 10.0)]) == (0, 1)


def test_a_dip_stops_its_run_and_the_screen(benchmark_script, tmp_path):
    mod = benchmark_script("bench_reactor_screen")
    t = time.perf_counter()
    out = mod.screen([0, 1, 2], 1, False, tmp_path, fake, poll_s=0.1)
    assert time.perf_counter() - t < 60  # seed 1 would sleep 120 s unless stopped
    assert [r["status"] for r in out["runs"]] == ["stable", "dipped", "not_run"]
    assert out["runs"][0]["first_475_at"] == 2 and out["runs"][0]["dipped_at"] is None
    assert out["runs"][1]["first_475_at"] == 1 and out["runs"][1]["dipped_at"] == [2, 300.0]
    assert out["runs"][1]["curve"] == [[1, 500.0], [2, 300.0]]  # stopped at the dip
    assert out["verdict"] == "dipped on seed 1: 300.0 at 2"
    assert (out["stable"], out["of"]) == (1, 3)


def test_a_dip_stops_the_runs_beside_it(benchmark_script, tmp_path):
    mod = benchmark_script("bench_reactor_screen")
    t = time.perf_counter()
    out = mod.screen([1, 4, 0], 2, False, tmp_path, fake, poll_s=0.1)
    assert time.perf_counter() - t < 60
    assert [r["status"] for r in out["runs"]] == ["dipped", "stopped", "not_run"]
    assert out["runs"][1]["curve"] == [[1, 100.0]]
    assert out["verdict"] == "dipped on seed 1: 300.0 at 2"


def test_with_all_every_seed_runs_and_failures_are_named(benchmark_script, tmp_path):
    mod = benchmark_script("bench_reactor_screen")
    out = mod.screen([0, 2, 3], 2, True, tmp_path, fake, poll_s=0.1)
    by_seed = {r["seed"]: r for r in out["runs"]}
    assert [by_seed[s]["status"] for s in (0, 2, 3)] == ["stable", "never", "error"]
    assert by_seed[3]["error"] == "boom: the run failed"
    assert out["verdict"] == "never on seed 2" and out["stable"] == 1
    every = mod.screen([0], 1, False, tmp_path, fake, poll_s=0.1)
    assert every["verdict"] == "stable on every seed"


def test_bad_overrides_get_one_clean_line(benchmark_script, capsys):
    mod = benchmark_script("bench_reactor_screen")
    with pytest.raises(SystemExit) as exc:
        mod.main(["--set", "batch_size=sixty"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--set batch_size=sixty: expected FIELD=JSON" in err


def test_the_real_benchmark_command_runs_a_seed(benchmark_script, tmp_path):
    mod = benchmark_script("bench_reactor_screen")
    sets = ["hidden=16", "lstm=16", "batch_size=4", "min_replay=4", "eval_every=150",
            "num_actors=2"]  # fmt: skip
    out = mod.screen([3], 1, False, tmp_path, mod.bench_command(300, sets), poll_s=0.2)
    (run,) = out["runs"]
    assert run["status"] == "never", run  # 300 env steps are far from 475
    assert [s // 150 for s, _ in run["curve"]] == [1, 2]  # an evaluation every 150 steps
    assert out["verdict"] == "never on seed 3"


def test_a_plain_text_value_is_a_string(benchmark_script, capsys):
    """``--set mirror=env`` as the README writes it: a value that is not JSON is a string,
    for a field that takes text; the runs get it as JSON."""
    mod = benchmark_script("bench_reactor_screen")
    p = mod.argparse.ArgumentParser()
    sets = ["mirror=env", "batch_size=64", 'env="CartPole-v1"', "learning_rate_final=null"]
    assert mod.json_sets(p, sets) == [
        'mirror="env"',
        "batch_size=64",
        'env="CartPole-v1"',
        "learning_rate_final=null",
    ]
    out = mod.main(["--set", "mirror=env", "--read", "--seeds", "0", "--work", "/nonexistent"])
    assert out == 0 and '"mirror=\\"env\\""' in capsys.readouterr().out
    with pytest.raises(SystemExit):
        mod.main(["--set", "mirror=sideways", "--read"])  # text, but not one of its choices
    assert "mirror" in capsys.readouterr().err.strip().splitlines()[-1]

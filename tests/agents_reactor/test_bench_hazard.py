"""benchmarks/bench_reactor_hazard.py: the share of evaluations >= target followed by one
below it, by env steps and by the training return before them, from run folders or rows."""

from __future__ import annotations

import json

import pytest


def write_run(path, rows):
    path.mkdir(parents=True)
    lines = [json.dumps(r) for r in rows] + ['{"kind": "eval", "env_st']  # a torn last line
    (path / "metrics.jsonl").write_text("\n".join(lines), encoding="utf-8")


def train(steps, ret):
    return {"kind": "train", "env_steps": steps, "episode_return": ret}


def ev(steps, ret):
    return {"kind": "eval", "env_steps": steps, "eval_return": ret}


@pytest.fixture
def runs(tmp_path):
    a = tmp_path / "a"  # 480 at 5k with training at 200 -> falls; holds from 12.5k
    write_run(a, [train(4000, 200.0), ev(5000, 480.0), train(9000, 495.0), ev(10000, 300.0),
                  train(12000, 500.0), ev(12500, 500.0), train(24000, 500.0),
                  ev(25000, 500.0)])  # fmt: skip
    b = tmp_path / "b"  # never reaches 475: counts as a run, adds no evaluation
    write_run(b, [train(1000, 20.0), ev(2500, 100.0), ev(5000, 200.0)])
    return [a, b]


def test_the_hazard_table_counts_each_fall_once(benchmark_script, runs, tmp_path, capsys):
    mod = benchmark_script("bench_reactor_hazard")
    rows = [row for run in runs for row in mod.rows_of_run(run)]
    assert rows[0] == [str(runs[0]), 5000, 480.0, 300.0, 200.0]
    assert rows[-1] == [str(runs[1]), 5000, 200.0, None, None]  # its train row: 4k back
    out = mod.hazard(rows, 475.0)
    assert (out["runs"], out["runs_reaching_target"]) == (2, 1)
    # 5k (>= 475, next 300: a fall) and 12.5k (next 500); 10k is below, 25k has no next
    assert out["all"] == {"evaluations": 2, "next_below": 1, "hazard": 0.5}
    assert out["by_env_steps"] == {
        "0k-10k": {"evaluations": 1, "next_below": 1, "hazard": 1.0},
        "10k-20k": {"evaluations": 1, "next_below": 0, "hazard": 0.0},
    }
    assert list(out["by_train_return_before"]) == ["<300", ">=490"]

    saved = tmp_path / "rows.json"
    assert mod.main([str(r) for r in runs] + ["--rows", str(saved)]) == 0
    first = json.loads(capsys.readouterr().out)
    assert mod.main(["--from-rows", str(saved)]) == 0
    assert json.loads(capsys.readouterr().out) == first == out


@pytest.mark.parametrize(
    "content",
    ["not json", '{"columns": ["run"], "rows": []}',
     '{"columns": ["run", "env_steps", "eval_return", "next_eval_return", "train_return"], '
     '"rows": [["a", "5000", 480, null, null]]}'],
)  # fmt: skip
def test_a_bad_rows_file_gets_one_clean_line(benchmark_script, tmp_path, capsys, content):
    bad = tmp_path / "rows.json"
    bad.write_text(content, encoding="utf-8")
    with pytest.raises(SystemExit) as exc:
        benchmark_script("bench_reactor_hazard").main(["--from-rows", str(bad)])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.endswith(
        f"{bad}: expected a rows file of --rows, with columns ('run', 'env_steps', "
        "'eval_return', 'next_eval_return', 'train_return')"
    )


def test_a_folder_without_metrics_is_named(benchmark_script, tmp_path, capsys):
    with pytest.raises(SystemExit):
        benchmark_script("bench_reactor_hazard").main([str(tmp_path)])
    assert f"got none in ['{tmp_path}']" in capsys.readouterr().err

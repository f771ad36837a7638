"""The time-to-result benchmark's bookkeeping: the medians over seeds (a run that never
reached the target is slower than any that did) and its task names."""

from __future__ import annotations

import pytest

from benchmarks import bench_time_to_result as bench


def _row(tree: str, seconds: float | None, steps: int | None, held: bool | None = None) -> dict:
    row = {"task": "cartpole-reactor", "tree": tree, "to_target_s": seconds,
           "to_target_steps": steps, "stopped": seconds is not None, "wall_s": 50.0,
           "first_row_s": 5.0}  # fmt: skip
    return {**row, "held": held}


def test_an_unreached_run_counts_as_the_slowest():
    runs = [_row("new", 20.0, 2000, True), _row("new", None, None, None),
            _row("new", 30.0, 3000, False), _row("today", None, None), _row("today", None, None),
            _row("today", 40.0, 5000)]  # fmt: skip
    out = bench.summarise(runs)["cartpole-reactor"]
    assert out["new"]["to_target_s"] == 30.0 and out["new"]["to_target_steps"] == 3000
    assert out["new"]["reached"] == 2 and out["new"]["held"] == 1
    assert out["today"]["to_target_s"] is None and out["today"]["reached"] == 1


def test_an_unknown_task_is_one_line(capsys):
    with pytest.raises(SystemExit) as exc:
        bench.main(["--tasks", "mc,pong"])
    assert exc.value.code != 0
    assert "--tasks: expected names from" in capsys.readouterr().err.strip().splitlines()[-1]

"""benchmarks/bench_reactor.py --set: a bad override ends the run with one clean line before
any training starts."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ("nosuchfield=1", "--set nosuchfield=1: expected FIELD=JSON with FIELD a ReactorConfig"),
        ("batch_size", "--set batch_size: expected FIELD=JSON with FIELD a ReactorConfig field"),
        ("batch_size=x", "--set batch_size=x: expected FIELD=JSON (strings in quotes), got 'x'"),
        ("batch_size=0", "--set: --batch-size: expected >= 1, got 0"),
    ],
)
def test_a_bad_override_gets_one_line(benchmark_script, capsys, tmp_path, item, message):
    with pytest.raises(SystemExit) as exc:
        benchmark_script("bench_reactor").main(["cartpole", "--work", str(tmp_path), "--set", item])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err.strip().splitlines()[-1]
    assert not (tmp_path / "runs").exists()  # nothing trained

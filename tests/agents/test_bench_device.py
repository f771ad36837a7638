"""benchmarks/bench_device.py: the learner timed per device, and an algorithm trained through
the CLI and its checkpoint evaluated on the CPU (the GPU half runs where there is one)."""

from __future__ import annotations

import json

import pytest
import torch


@pytest.fixture
def run(benchmark_script, capsys):
    """``run(argv)``: bench_device.py's JSON report for ``argv``."""

    def main(argv: list[str]) -> dict:
        assert benchmark_script("bench_device").main(argv) == 0
        return json.loads(capsys.readouterr().out)

    return main


def test_learner_times_each_device(run):
    out = run(["learner", "--envs", "CartPole-v1", "--rounds", "1"])
    (row,) = out["envs"]
    assert row["env"] == "CartPole-v1"
    assert row["cpu_ms"] > 0
    if torch.cuda.is_available():
        assert row["cuda_ms"] > 0 and row["cpu_over_cuda"] > 0
    else:
        assert row["cuda_ms"].startswith("unavailable")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the report without a GPU")
def test_algos_without_a_gpu_says_so(run):
    out = run(["algos", "--device", "cuda"])
    assert out["error"] == "torch sees no GPU"


def test_an_algorithm_trains_and_its_checkpoint_evaluates(tmp_path, run):
    out = run(["algos", "--device", "cpu", "--algos", "bc", "--work", str(tmp_path)])
    (row,) = out["runs"]
    assert out["passed"] == "1/1"
    assert row["train_rc"] == 0 and row["evaluate_on_cpu_rc"] == 0
    assert "mean return" in row["evaluate_on_cpu"]
    assert row["ups"] > 0

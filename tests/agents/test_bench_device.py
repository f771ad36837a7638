"""benchmarks/bench_device.py: the learner timed per device, and an algorithm trained through
the CLI and its checkpoint evaluated on the CPU (the GPU half runs where there is one)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import torch

PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_device.py"


def bench():
    spec = importlib.util.spec_from_file_location("bench_device", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(argv: list[str], capsys) -> dict:
    assert bench().main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_learner_times_each_device(capsys):
    out = run(["learner", "--envs", "CartPole-v1", "--rounds", "1"], capsys)
    (row,) = out["envs"]
    assert row["env"] == "CartPole-v1"
    assert row["cpu_ms"] > 0
    if torch.cuda.is_available():
        assert row["cuda_ms"] > 0 and row["cpu_over_cuda"] > 0
    else:
        assert row["cuda_ms"].startswith("unavailable")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the report without a GPU")
def test_algos_without_a_gpu_says_so(capsys):
    out = run(["algos", "--device", "cuda"], capsys)
    assert out["error"] == "torch sees no GPU"


def test_an_algorithm_trains_and_its_checkpoint_evaluates(tmp_path, capsys):
    out = run(["algos", "--device", "cpu", "--algos", "bc", "--work", str(tmp_path)], capsys)
    (row,) = out["runs"]
    assert out["passed"] == "1/1"
    assert row["train_rc"] == 0 and row["evaluate_on_cpu_rc"] == 0
    assert "mean return" in row["evaluate_on_cpu"]
    assert row["ups"] > 0

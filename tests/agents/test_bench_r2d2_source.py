"""What the source-beside-ours benchmark states about its workloads holds for our networks."""

from __future__ import annotations

import torch

from agents.core.agent import EnvInfo
from agents.core.preprocess import make_preprocessor
from agents.r2d2 import R2D2, R2D2Config
from benchmarks import bench_r2d2_source as bench
from demostudio.episode import make_env


def network(workload: str) -> torch.nn.Module:
    flags = bench.WORKLOADS[workload]
    widths = {
        k: int(flags[flags.index(f"--{k}") + 1]) for k in ("hidden", "lstm") if f"--{k}" in flags
    }
    cfg = R2D2Config(env="CartPole-v1", **widths)
    env = make_env(cfg.env)
    info = EnvInfo(cfg.env, env, make_preprocessor(env.observation_space))
    return R2D2(cfg).build_networks(info)["main"]


def macs_per_step(net: torch.nn.Module) -> int:
    """Multiply-adds of one step: every Linear's and the LSTM's weight matrices."""
    total = 0
    for m in net.modules():
        if isinstance(m, torch.nn.Linear):
            total += m.weight.numel()
        elif isinstance(m, torch.nn.LSTM):
            total += m.weight_ih_l0.numel() + m.weight_hh_l0.numel()
    return total


def test_matched_network_does_the_sources_work_per_step():
    net = network("matched")
    assert sum(p.numel() for p in net.parameters()) == 21_979
    spec = net.spec
    assert macs_per_step(net) == bench.ours_macs_per_step(spec.hidden, spec.lstm) == 21_448
    assert abs(bench.ours_macs_per_step(32, 50) / bench.source_macs_per_step() - 1) < 0.01
    flops = bench.flops("matched")
    assert 0.8 < flops["ours_over_source"] < 1.0  # no gradient through our burn-in


def test_issue_workload_states_our_default_network():
    net = network("issue")
    assert sum(p.numel() for p in net.parameters()) == 47_043
    assert macs_per_step(net) == bench.ours_macs_per_step(64, 64)
    assert bench.flops("issue")["ours_over_source"] > 1.8

"""Demo ratio annealing, the demo share actually sampled, priority write-back and the
annealed importance-weight exponent."""

from __future__ import annotations

import numpy as np
import pytest

from agents.core.mixing import DataSource, LinearSchedule, ReplayMix
from agents.core.replay import PrioritizedSequenceReplay
from tests.agents.test_replay import make_batch


def test_linear_schedule_anneals_then_holds():
    s = LinearSchedule(1.0, 1.0 / 512, 1000)
    assert s(0) == 1.0
    assert s(500) == pytest.approx((1.0 + 1.0 / 512) / 2)
    assert s(1000) == pytest.approx(1.0 / 512)
    assert s(10**6) == pytest.approx(1.0 / 512)
    assert LinearSchedule(0.25)(10**6) == 0.25  # fixed


def make_mix(ratio, seed=0):
    agent = PrioritizedSequenceReplay(100, alpha=1.0, seed=seed, name="agent")
    demo = PrioritizedSequenceReplay(100, alpha=1.0, seed=seed + 1, name="demo")
    agent.add(make_batch(list(range(50))))
    demo.add(make_batch(list(range(1000, 1050))))
    return agent, demo, ReplayMix(agent, [DataSource("demo", demo, ratio, demo=True)], seed=seed)


@pytest.mark.parametrize("ratio", [0.0, 1 / 16, 0.25, 0.5])
def test_demo_share_actually_sampled(ratio):
    _, _, mix = make_mix(LinearSchedule(ratio))
    shares = []
    for _ in range(300):
        s = mix.sample(32, step=0)
        from_demo = s.batch.obs["obs"][:, 0, 0] >= 1000
        np.testing.assert_array_equal(from_demo, s.source == 1)  # sources label the content
        np.testing.assert_array_equal(from_demo, s.is_demo)  # and the demo flag follows them
        assert s.names == ("agent", "demo")
        shares.append(from_demo.mean())
    assert np.mean(shares) == pytest.approx(ratio, abs=0.02)


def test_annealed_demo_share_follows_schedule():
    _, _, mix = make_mix(LinearSchedule(1.0, 0.0, 1000))
    early = np.mean([np.mean(mix.sample(32, step=0).source == 1) for _ in range(50)])
    middle = np.mean([np.mean(mix.sample(32, step=500).source == 1) for _ in range(200)])
    late = np.mean([np.mean(mix.sample(32, step=2000).source == 1) for _ in range(50)])
    assert early == 1.0 and late == 0.0
    assert middle == pytest.approx(0.5, abs=0.05)


def test_priorities_written_back_to_the_right_buffer():
    agent, demo, mix = make_mix(LinearSchedule(0.5))
    s = mix.sample(16, step=0)
    assert set(s.source.tolist()) == {0, 1}
    td = np.where(s.source == 1, 7.0, 3.0)[:, None].repeat(4, 1)
    mask = np.ones_like(td, bool)
    mix.update_priorities(s, td, mask)
    agent_p, demo_p = agent.priorities(), demo.priorities()
    for src, idx in zip(s.source, s.index):
        assert (demo_p if src == 1 else agent_p)[idx] == pytest.approx(7.0 if src == 1 else 3.0)
    # untouched slots keep the initial priority 1
    untouched = np.setdiff1d(np.arange(50), s.index[s.source == 0])
    np.testing.assert_allclose(agent_p[untouched], 1.0)
    assert agent.max_priority == 3.0 and demo.max_priority == 7.0


def test_empty_extra_source_is_skipped_and_ratios_checked():
    agent = PrioritizedSequenceReplay(10, name="agent")
    agent.add(make_batch([1, 2]))
    memory = PrioritizedSequenceReplay(10, name="memory")
    mix = ReplayMix(agent, [DataSource("memory", memory, lambda t: 0.5, min_size=4)])
    assert mix.ratios(0) == [0.0]
    assert (mix.sample(8, 0).source == 0).all()
    bad = ReplayMix(
        agent, [DataSource("a", agent, lambda t: 0.8), DataSource("b", agent, lambda t: 0.8)]
    )
    with pytest.raises(ValueError, match="sum to at most 1"):
        bad.ratios(0)


def test_annealed_beta_sets_every_buffers_importance_weights():
    agent, demo, _ = make_mix(LinearSchedule(0.5))
    agent.update_priorities(np.arange(50), np.linspace(0.1, 5.0, 50))
    demo.update_priorities(np.arange(50), np.linspace(5.0, 0.1, 50))
    beta = LinearSchedule(0.2, 1.0, 1000)
    mix = ReplayMix(agent, [DataSource("demo", demo, LinearSchedule(0.5), demo=True)], 0, beta)
    for step, b in [(0, 0.2), (500, 0.6), (1000, 1.0), (10**6, 1.0)]:
        s = mix.sample(64, step)
        prob = np.where(s.source == 0, agent.probabilities()[s.index], 0.0)
        prob = np.where(s.source == 1, demo.probabilities()[s.index], prob)
        raw = (50 * prob) ** -b  # (N P(i))^-beta in both buffers (50 items each)
        np.testing.assert_allclose(s.weight, raw / raw.max(), rtol=1e-5)


def test_beta_flags_reach_a_run_and_bad_ones_get_one_line(tmp_path, capsys):
    from agents.core.logger import read_metrics
    from demostudio.cli import main

    tiny = ["--env", "CartPole-v1", "--num-actors", "2", "--hidden", "8", "--lstm", "8",
            "--burn-in", "0", "--trace", "4", "--period", "2", "--batch-size", "8",
            "--min-replay", "8", "--eval-every", "0", "--no-progress", "--no-tensorboard",
            "--total-env-steps", "400", "--device", "cpu"]  # fmt: skip
    flat = [*tiny, "--run-dir", str(tmp_path / "flat"), "--priority-beta", "0"]
    assert main(["train", "r2d2", *flat]) == 0  # beta 0: every importance weight is 1
    ramp = [*tiny, "--run-dir", str(tmp_path / "ramp"), "--priority-beta", "0",
            "--priority-beta-final", "1", "--priority-beta-steps", "1"]  # fmt: skip
    assert main(["train", "r2d2", *ramp]) == 0  # beta 1 from the first step on
    means, betas = {}, {}
    for name in ("flat", "ramp"):
        rows = [r for r in read_metrics(tmp_path / name) if r["kind"] == "train"]
        means[name] = [r["is_weight_mean"] for r in rows]
        betas[name] = {r["priority_beta"] for r in rows}
    assert betas == {"flat": {0.0}, "ramp": {1.0}}  # the exponent in use, logged
    assert means["flat"] and all(m == 1.0 for m in means["flat"])
    assert means["ramp"] and min(means["ramp"]) < 0.99  # the priorities spread the weights
    capsys.readouterr()
    bad = [*tiny, "--run-dir", str(tmp_path / "bad"), "--priority-beta-final", "1.5"]
    assert main(["train", "r2d2", *bad]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["demostudio: error: --priority-beta-final: expected in [0, 1], got 1.5"]
    assert not (tmp_path / "bad").exists()

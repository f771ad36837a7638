"""Demo ratio annealing, the demo share actually sampled and priority write-back."""

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

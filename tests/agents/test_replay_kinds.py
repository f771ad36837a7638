"""The replay kinds of the Keras-RL R2D3 write-up (uniform, proportional, rank, greedy):
probabilities and importance weights by hand, priority updates that change sampling, replay
state that survives a save and restore, and the flags that pick a kind for each memory."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pytest

from agents.core.context import RunContext
from agents.core.replay import (
    REPLAY_KINDS,
    PrioritizedSequenceReplay,
    greedy_indices,
    rank_probabilities,
)
from agents.r2d3 import R2D3, R2D3Config
from tests.agents.test_replay import make_batch

PRIORITIES = np.array([0.5, 3.0, 1.0, 2.0])
"""Ranks (1 = highest): item 1 -> 1, item 3 -> 2, item 2 -> 3, item 0 -> 4."""


def filled(kind: str, alpha: float = 0.7, beta: float = 0.5, seed: int = 0):
    buf = PrioritizedSequenceReplay(8, alpha=alpha, beta=beta, seed=seed, kind=kind)
    buf.add(make_batch([10, 11, 12, 13]), priority=PRIORITIES)
    return buf


def frequencies(buf: PrioritizedSequenceReplay, draws: int = 400, n: int = 8) -> np.ndarray:
    index = np.concatenate([buf.sample(n).index for _ in range(draws)])
    return np.bincount(index, minlength=len(buf)) / len(index)


def test_rank_probabilities_by_hand():
    alpha = 0.7
    mass = {1: 1.0, 3: (1 / 2) ** alpha, 2: (1 / 3) ** alpha, 0: (1 / 4) ** alpha}
    total = sum(mass.values())
    expected = np.array([mass[i] / total for i in range(4)])
    np.testing.assert_allclose(rank_probabilities(PRIORITIES, alpha), expected)
    # only the order counts: any priorities with the same ranks give the same probabilities
    np.testing.assert_allclose(rank_probabilities(np.array([1, 1e6, 2, 9.0]), alpha), expected)
    # ties ranked by position (the earlier slot first); alpha 0 is uniform
    np.testing.assert_allclose(rank_probabilities(np.ones(3), 1.0), np.array([6, 3, 2]) / 11)
    np.testing.assert_allclose(rank_probabilities(PRIORITIES, 0.0), 0.25)

    buf = filled("rank", alpha=alpha)
    np.testing.assert_allclose(buf.probabilities(), expected)
    np.testing.assert_allclose(frequencies(buf), expected, atol=0.02)


def test_importance_weights_by_hand():
    beta = 0.5
    for kind in ("proportional", "rank"):
        buf = filled(kind, beta=beta)
        prob = buf.probabilities()
        s = buf.sample(16)
        np.testing.assert_allclose(s.weight, (4 * prob[s.index]) ** -beta)
    prop = filled("proportional", alpha=1.0, beta=beta)
    np.testing.assert_allclose(prop.probabilities(), PRIORITIES / PRIORITIES.sum())
    # uniform and greedy draw without correcting for priorities: every weight is 1
    for kind in ("uniform", "greedy"):
        np.testing.assert_allclose(filled(kind, beta=beta).sample(16).weight, 1.0)


def test_greedy_returns_the_top_priorities_best_first():
    buf = filled("greedy")
    assert buf.sample(2).index.tolist() == [1, 3]
    assert buf.sample(3).index.tolist() == [1, 3, 2]
    assert buf.sample(6).index.tolist() == [1, 3, 2, 0, 1, 3]  # more than stored: cycles
    s = buf.sample(2)
    assert s.batch.obs["obs"][:, 0, 0].tolist() == [11.0, 13.0]  # the items, not only slots
    assert greedy_indices(np.array([2.0, 5.0, 2.0]), 3).tolist() == [1, 0, 2]


def test_uniform_ignores_priorities():
    buf = filled("uniform")
    np.testing.assert_allclose(frequencies(buf), 0.25, atol=0.02)
    buf.update_priorities(np.array([0]), np.array([100.0]))
    np.testing.assert_allclose(frequencies(buf), 0.25, atol=0.02)


@pytest.mark.parametrize("kind", ["proportional", "rank", "greedy"])
def test_priority_updates_change_sampling(kind):
    buf = filled(kind)
    before = frequencies(buf, n=2)
    assert before[0] == min(before)  # item 0 has the lowest priority
    buf.update_priorities(np.array([0]), np.array([50.0]))  # now the highest
    after = frequencies(buf, n=2)
    assert after[0] == max(after) and after[0] > before[0] + 0.1
    if kind == "greedy":
        assert buf.sample(1).index.tolist() == [0]
        buf.update_priorities(np.array([0]), np.array([0.1]))  # learned: drops back
        assert buf.sample(2).index.tolist() == [1, 3]


@pytest.mark.parametrize("kind", REPLAY_KINDS)
def test_replay_state_round_trip_for_each_kind(tmp_path, kind):
    from agents.core.checkpoint import load_replays, save_replays

    buf = PrioritizedSequenceReplay(8, alpha=0.7, seed=3, name="agent replay", kind=kind)
    buf.add(make_batch(list(range(5))))
    buf.add(make_batch(list(range(5, 11))))  # wraps
    buf.update_priorities(np.array([0, 5, 6]), np.array([9.0, 0.2, 4.0]))
    save_replays(tmp_path, 7, {buf.name: buf.state_arrays()})
    _, arrays = load_replays(tmp_path)
    back = PrioritizedSequenceReplay(8, alpha=0.7, seed=3, name="agent replay", kind=kind)
    back.load_state_arrays(arrays["agent replay"], "replay.npz")
    np.testing.assert_array_equal(back.priorities(), buf.priorities())
    np.testing.assert_allclose(back.probabilities(), buf.probabilities())
    a, b = buf.sample(32), back.sample(32)
    np.testing.assert_array_equal(a.index, b.index)
    np.testing.assert_array_equal(a.weight, b.weight)
    np.testing.assert_array_equal(a.batch.obs["obs"], b.batch.obs["obs"])


@pytest.mark.parametrize("kind", ["proportional", "rank"])
def test_a_uniform_share_mixes_uniform_draws_in(kind):
    beta, u = 0.5, 0.4
    plain = filled(kind, beta=beta).probabilities()
    buf = PrioritizedSequenceReplay(8, alpha=0.7, beta=beta, seed=0, kind=kind, uniform_share=u)
    buf.add(make_batch([10, 11, 12, 13]), priority=PRIORITIES)
    expected = (1 - u) * plain + u / 4
    np.testing.assert_allclose(buf.probabilities(), expected)
    np.testing.assert_allclose(frequencies(buf, draws=1000), expected, atol=0.02)
    s = buf.sample(64)
    np.testing.assert_allclose(s.weight, (4 * expected[s.index]) ** -beta)
    # a stale low priority still gets at least its uniform share of the draws
    buf.update_priorities(np.array([0]), np.array([1e-6]))
    assert frequencies(buf, draws=1000)[0] > 0.8 * u / 4
    # the whole share uniform: the kind's probabilities no longer count
    whole = PrioritizedSequenceReplay(8, seed=0, kind=kind, uniform_share=1.0)
    whole.add(make_batch([10, 11, 12, 13]), priority=PRIORITIES)
    np.testing.assert_allclose(whole.sample(16).weight, 1.0)


@pytest.mark.parametrize("kind", ["uniform", "greedy"])
def test_a_uniform_share_needs_a_kind_to_mix_with(kind):
    with pytest.raises(
        ValueError, match=rf"expected a uniform share in \[0, 1\] \(0 for the {kind}"
    ):
        PrioritizedSequenceReplay(4, kind=kind, uniform_share=0.5)
    with pytest.raises(ValueError, match="--replay-uniform-share: expected 0 with --replay-kind"):
        R2D3Config(env="CartPole-v1", replay_kind=kind, replay_uniform_share=0.5).validate()
    with pytest.raises(ValueError, match=r"--replay-uniform-share: expected in \[0, 1\]"):
        R2D3Config(env="CartPole-v1", replay_uniform_share=1.5).validate()


def test_unknown_kind_is_named():
    with pytest.raises(ValueError, match=r"demo replay: expected a replay kind in .*got 'best'"):
        PrioritizedSequenceReplay(4, name="demo replay", kind="best")


class KindProbe(R2D3):
    """R2D3 that records the kind of each data source once the run has built them."""

    seen: ClassVar[dict[str, str]] = {}

    def start(self, ctx: RunContext) -> None:
        KindProbe.seen = {s.name: s.buffer.kind for s in ctx.mix.sources}


def test_flags_pick_a_kind_for_each_memory(tmp_path, cartpole_demos):
    from agents.core.run import train

    cfg = R2D3Config(
        env="CartPole-v1", demos=(cartpole_demos,), num_actors=2, hidden=16, lstm=16,
        batch_size=8, min_replay=4, eval_episodes=1, eval_every=0, total_env_steps=200,
        progress=False, tensorboard=False, device="cpu", run_dir=tmp_path / "run",
        replay_kind="rank", demo_replay_kind="greedy", episode_memory_kind="uniform",
        episode_memory_ratio=0.1,
    )  # fmt: skip
    train(KindProbe(cfg))
    assert KindProbe.seen == {
        "agent replay": "rank",
        "demo replay": "greedy",
        "episode memory": "uniform",
    }


def test_cli_rejects_an_unknown_kind(capsys):
    from demostudio.cli import main

    argv = ["train", "r2d3", "--env", "CartPole-v1", "--demos", "x", "--replay-kind", "top"]
    assert main(argv) == 2  # one line, not the usage of every flag
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--replay-kind" in err[0] and "invalid choice: 'top'" in err[0]

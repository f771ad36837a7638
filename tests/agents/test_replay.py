"""Sum tree and prioritized sequence replay."""

from __future__ import annotations

import numpy as np
import pytest

from agents.core.replay import PrioritizedSequenceReplay, SumTree, sequence_priority
from agents.core.sequences import SequenceBatch


def make_batch(ids: list[int], length: int = 4) -> SequenceBatch:
    b = len(ids)
    obs = np.repeat(np.array(ids, np.float32)[:, None, None], length, axis=1)
    return SequenceBatch(
        obs={"obs": obs},
        prev_action=np.zeros((b, length), np.int64),
        prev_reward=np.zeros((b, length), np.float32),
        action=np.zeros((b, length), np.int64),
        reward=np.zeros((b, length), np.float32),
        terminal=np.zeros((b, length), np.float32),
        mask=np.ones((b, length), bool),
        h0=np.array(ids, np.float32)[:, None].repeat(3, 1),
        c0=np.zeros((b, 3), np.float32),
    )


def test_sum_tree_totals_and_find():
    tree = SumTree(5)
    tree.set(np.arange(5), np.array([1.0, 2.0, 3.0, 4.0, 0.0]))
    assert tree.total == pytest.approx(10.0)
    # cumulative: [0,1) -> 0, [1,3) -> 1, [3,6) -> 2, [6,10) -> 3; leaf 4 has 0 mass
    assert tree.find(np.array([0.0, 0.99, 1.0, 2.5, 3.0, 5.9, 6.0, 9.99])).tolist() == [
        0, 0, 1, 1, 2, 2, 3, 3,
    ]  # fmt: skip
    tree.set(np.array([1]), np.array([0.5]))
    assert tree.total == pytest.approx(8.5)
    assert tree.get(np.array([1, 3])).tolist() == [0.5, 4.0]


def test_sum_tree_sampling_is_proportional():
    tree = SumTree(4)
    tree.set(np.arange(4), np.array([1.0, 0.0, 3.0, 6.0]))
    rng = np.random.default_rng(0)
    counts = np.bincount(np.concatenate([tree.sample(50, rng) for _ in range(400)]), minlength=4)
    freq = counts / counts.sum()
    assert freq[1] == 0
    np.testing.assert_allclose(freq, [0.1, 0.0, 0.3, 0.6], atol=0.02)


def test_sum_tree_rejects_bad_input():
    tree = SumTree(3)
    with pytest.raises(IndexError):
        tree.set(np.array([3]), np.array([1.0]))
    with pytest.raises(ValueError, match="priorities"):
        tree.set(np.array([0]), np.array([-1.0]))
    with pytest.raises(ValueError, match="positive total"):
        tree.sample(1, np.random.default_rng(0))


def test_sequence_priority_mixes_max_and_mean():
    td = np.array([[1.0, 3.0, 100.0], [2.0, 2.0, 2.0]])
    mask = np.array([[True, True, False], [True, True, True]])
    np.testing.assert_allclose(sequence_priority(td, mask, 0.9), [0.9 * 3 + 0.1 * 2, 2.0])


def test_new_items_enter_at_max_priority_and_ring_overwrites():
    buf = PrioritizedSequenceReplay(4, alpha=1.0, beta=1.0, seed=0)
    buf.add(make_batch([0, 1]))
    np.testing.assert_allclose(buf.priorities(), [1.0, 1.0])
    buf.update_priorities(np.array([0]), np.array([5.0]))
    buf.add(make_batch([2, 3, 4]))  # wraps: item 4 overwrites slot 0
    assert len(buf) == 4 and buf.added == 5
    np.testing.assert_allclose(buf.priorities(), [5.0, 1.0, 5.0, 5.0])
    assert buf._data.obs["obs"][0, 0, 0] == 4


def test_priorities_change_what_is_sampled():
    buf = PrioritizedSequenceReplay(8, alpha=1.0, beta=0.5, seed=1)
    buf.add(make_batch(list(range(8))))
    before = np.bincount(np.concatenate([buf.sample(32).index for _ in range(100)]), minlength=8)
    assert before.min() > 0.5 * before.mean()  # equal priorities: roughly uniform
    buf.update_priorities(np.arange(8), np.array([0.1] * 7 + [10.0]))
    s = buf.sample(32)
    # the sampled *content* follows the slot: element ids come back with the batch
    np.testing.assert_array_equal(s.batch.obs["obs"][:, 0, 0], s.index)
    after = np.bincount(np.concatenate([buf.sample(32).index for _ in range(100)]), minlength=8)
    assert after[7] / after.sum() > 0.85
    # importance weights undo the skew: the rare items weigh more
    w = dict(zip(s.index.tolist(), s.weight.tolist()))
    if 0 in w or 1 in w:
        assert min(w.values()) == pytest.approx(w[7])


def test_alpha_zero_is_uniform_but_keeps_priorities():
    buf = PrioritizedSequenceReplay(4, alpha=0.0, beta=1.0, seed=0)
    buf.add(make_batch([0, 1, 2, 3]))
    buf.update_priorities(np.array([2]), np.array([9.0]))
    np.testing.assert_allclose(buf.priorities(), [1.0, 1.0, 9.0, 1.0])
    counts = np.bincount(np.concatenate([buf.sample(4).index for _ in range(200)]), minlength=4)
    assert counts.min() > 150  # stratified over equal masses: uniform
    np.testing.assert_allclose(buf.sample(4).weight, 1.0)


def test_replay_state_round_trip_samples_the_same(tmp_path):
    from agents.core.checkpoint import load_replays, save_replays

    buf = PrioritizedSequenceReplay(8, alpha=0.7, seed=3, name="agent replay")
    buf.add(make_batch(list(range(5))))
    buf.add(make_batch(list(range(5, 11))))  # wraps: ids 8..10 overwrite 0..2
    buf.update_priorities(np.array([0, 5]), np.array([9.0, 0.2]))
    save_replays(tmp_path, 123, {buf.name: buf.state_arrays()})
    steps, arrays = load_replays(tmp_path)
    assert steps == 123

    back = PrioritizedSequenceReplay(8, alpha=0.7, seed=3, name="agent replay")
    back.load_state_arrays(arrays["agent replay"], "replay.npz")
    assert (back.size, back.added, back.max_priority) == (8, 11, 9.0)
    np.testing.assert_array_equal(back.priorities(), buf.priorities())
    assert back.tree.total == pytest.approx(buf.tree.total)
    a, b = buf.sample(64), back.sample(64)  # same rng seed, same tree -> same draws
    np.testing.assert_array_equal(a.index, b.index)
    np.testing.assert_array_equal(a.batch.obs["obs"], b.batch.obs["obs"])
    np.testing.assert_array_equal(a.batch.h0, b.batch.h0)
    # the ring position carried over: the next add overwrites the oldest (id 3)
    back.add(make_batch([99]))
    assert 3 not in back._data.obs["obs"][:, 0, 0] and 99 in back._data.obs["obs"][:, 0, 0]


def test_replay_state_mismatch_and_damage_are_named(tmp_path):
    from agents.core.checkpoint import CheckpointError, load_replays, save_replays

    buf = PrioritizedSequenceReplay(8, name="agent replay")
    buf.add(make_batch([1, 2]))
    state = buf.state_arrays()
    with pytest.raises(ValueError, match=r"replay.npz: agent replay: expected capacity 4, got 8"):
        PrioritizedSequenceReplay(4, name="agent replay").load_state_arrays(state, "replay.npz")
    del state["priorities"]
    with pytest.raises(ValueError, match="expected array 'priorities', got none"):
        PrioritizedSequenceReplay(8, name="agent replay").load_state_arrays(state, "replay.npz")

    save_replays(tmp_path, 1, {"agent replay": buf.state_arrays()})
    path = tmp_path / "checkpoints" / "replay.npz"
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(CheckpointError, match=r"replay\.npz: expected a DemoStudio replay file"):
        load_replays(tmp_path)


def test_sum_tree_one_path_at_a_time_sums_as_many_at_once():
    """An added sequence updates its one path in Python numbers: every node (the root's
    total included) is the float the vectorized update of many paths gives."""
    rng = np.random.default_rng(0)
    one, many = SumTree(37), SumTree(37)
    for _ in range(20):
        index = rng.choice(37, size=6, replace=False)
        value = rng.random(6) ** 3 * 1e3
        many.set(index, value)
        for i, v in zip(index, value):
            one.set(np.array([i]), np.array([v]))
        np.testing.assert_array_equal(one._tree, many._tree)
    mass = rng.random(200) * one.total
    np.testing.assert_array_equal(one.find(mass), many.find(mass))
    with pytest.raises(ValueError, match="priorities"):
        one.set(np.array([0]), np.array([np.nan]))

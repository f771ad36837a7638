"""Sequence cutting: episode ends, padding, period overlap, stored states (index in obs)."""

from __future__ import annotations

import numpy as np
import pytest

from agents.core.sequences import EndBehavior, SequenceWriter


def run_episode(writer: SequenceWriter, steps: int, terminal: bool = True):
    """Observation t is [t]; action t = t % 3; reward t = 10 + t; state before obs t = t."""
    out = []
    writer.begin({"obs": np.array([0.0])}, np.array([0.0]), np.array([-0.0]))
    for t in range(steps):
        seq = writer.step(
            t % 3,
            10.0 + t,
            terminal and t == steps - 1,
            {"obs": np.array([t + 1.0])},
            np.array([t + 1.0]),
            np.array([-(t + 1.0)]),
        )
        out.append(seq)
    out.append(writer.end())
    return out


def gather(parts):
    from agents.core.sequences import concat_batches

    return concat_batches([p for p in parts if p is not None])


def test_zero_pad_starts_padding_and_masks():
    w = SequenceWriter(length=5, period=3, end=EndBehavior.ZERO_PAD)
    parts = run_episode(w, steps=7)
    b = gather(parts)
    # starts 0, 3, 6 (the docstring diagram)
    assert b.obs["obs"][:, 0, 0].tolist() == [0, 3, 6]
    # sequence at 3 is complete: observations 3..7, the last position has no action
    np.testing.assert_array_equal(b.obs["obs"][1, :, 0], [3, 4, 5, 6, 7])
    np.testing.assert_array_equal(b.mask[1], [1, 1, 1, 1, 0])
    np.testing.assert_array_equal(b.action[1, :4], [0, 1, 2, 0])
    np.testing.assert_array_equal(b.reward[1, :4], [13, 14, 15, 16])
    np.testing.assert_array_equal(b.terminal[1], [0, 0, 0, 1, 0])
    # sequence at 6: obs 6, 7 then zero padding; one real step
    np.testing.assert_array_equal(b.obs["obs"][2, :, 0], [6, 7, 0, 0, 0])
    np.testing.assert_array_equal(b.mask[2], [1, 0, 0, 0, 0])
    np.testing.assert_array_equal(b.terminal[2], [1, 0, 0, 0, 0])
    # previous action / reward: -1 / 0 at the episode start, then the step before
    np.testing.assert_array_equal(b.prev_action[0], [-1, 0, 1, 2, 0])
    np.testing.assert_array_equal(b.prev_reward[0], [0, 10, 11, 12, 13])
    # stored state = the state before each sequence's first observation
    np.testing.assert_array_equal(b.h0[:, 0], [0, 3, 6])
    np.testing.assert_array_equal(b.c0[:, 0], [0, -3, -6])


def test_sequences_are_emitted_as_soon_as_complete():
    w = SequenceWriter(length=5, period=3)
    parts = run_episode(w, steps=7)
    # after step t the last observation is t + 1; sequence [0..4] completes at t = 3
    emitted_at = [i for i, p in enumerate(parts[:-1]) if p is not None]
    assert emitted_at == [3, 6]
    assert parts[-1] is not None and parts[-1].obs["obs"][0, 0, 0] == 6


def test_period_overlap_and_never_crossing_episodes():
    w = SequenceWriter(length=6, period=2)
    b1 = gather(run_episode(w, steps=9))
    b2 = gather(run_episode(w, steps=3))  # second episode on the same writer
    starts = b1.obs["obs"][:, 0, 0].tolist()
    assert starts == [0, 2, 4, 6, 8]
    # consecutive sequences overlap by length - period = 4 observations
    np.testing.assert_array_equal(b1.obs["obs"][0, 2:, 0], b1.obs["obs"][1, :4, 0])
    # the second episode starts fresh: obs 0, prev action -1, its own states
    assert b2.obs["obs"][:, 0, 0].tolist() == [0, 2]
    assert b2.prev_action[0, 0] == -1
    assert b2.mask.sum(axis=1).tolist() == [3, 1]


def test_align_end_moves_last_start_back():
    w = SequenceWriter(length=5, period=3, end=EndBehavior.ALIGN_END)
    b = gather(run_episode(w, steps=9))
    # grid starts 0, 3, 6 (6 would run past obs 9) -> 6 moved back to 9 + 1 - 5 = 5
    assert b.obs["obs"][:, 0, 0].tolist() == [0, 3, 5]
    np.testing.assert_array_equal(b.obs["obs"][2, :, 0], [5, 6, 7, 8, 9])
    np.testing.assert_array_equal(b.mask[2], [1, 1, 1, 1, 0])
    assert b.h0[2, 0] == 5
    # an episode shorter than a sequence is still padded
    short = gather(run_episode(w, steps=2))
    np.testing.assert_array_equal(short.mask[0], [1, 1, 0, 0, 0])


def test_align_end_drops_duplicate():
    w = SequenceWriter(length=5, period=3, end=EndBehavior.ALIGN_END)
    b = gather(run_episode(w, steps=7))  # the docstring diagram: start 6 -> 3, a duplicate
    assert b.obs["obs"][:, 0, 0].tolist() == [0, 3]


def test_truncated_episode_has_no_terminal():
    w = SequenceWriter(length=4, period=4)
    b = gather(run_episode(w, steps=5, terminal=False))
    assert b.terminal.sum() == 0
    # starts 0 and 4: 3 learnable steps (the last position is bootstrap only) + 1
    np.testing.assert_array_equal(b.mask.sum(axis=1), [3, 1])
    np.testing.assert_array_equal(b.action[1, :1], [4 % 3])
    assert b.obs["obs"][1, 1, 0] == 5  # the final observation is kept for bootstrapping


def test_bad_writer_arguments():
    with pytest.raises(ValueError, match="length >= 2"):
        SequenceWriter(length=1, period=1)


@pytest.mark.parametrize("end", list(EndBehavior))
@pytest.mark.parametrize(
    ("length", "period", "steps"), [(5, 3, 23), (6, 2, 17), (4, 3, 12), (16, 5, 333), (3, 2, 500)]
)
def test_every_step_field_matches_its_index(end, length, period, steps):
    """Long episodes exercise trimming: every field must stay aligned with its step."""
    writer = SequenceWriter(length, period, end)
    run_episode(writer, steps // 3)  # the writer's arrays are reused from episode to episode
    b = gather(run_episode(writer, steps))
    for i in range(len(b)):
        s = int(b.h0[i, 0])  # the stored state tells the start
        for j in range(length):
            t = s + j
            if t <= steps:
                assert b.obs["obs"][i, j, 0] == t
                assert b.prev_action[i, j] == (-1 if t == 0 else (t - 1) % 3)
            if b.mask[i, j]:
                assert t < steps and j < length - 1
                assert b.action[i, j] == t % 3 and b.reward[i, j] == 10 + t
                assert b.terminal[i, j] == (t == steps - 1)
    # every step is learnable in at least one sequence
    covered = {int(b.h0[i, 0]) + j for i in range(len(b)) for j in range(length) if b.mask[i, j]}
    assert covered == set(range(steps))


def test_extras_that_start_mid_episode_are_refused():
    w = SequenceWriter(length=4, period=2)
    w.begin({"obs": np.zeros(1)}, np.zeros(1), np.zeros(1))
    w.step(0, 1.0, False, {"obs": np.ones(1)}, np.zeros(1), np.zeros(1))
    with pytest.raises(ValueError, match="from the first step on"):
        w.step(0, 1.0, False, {"obs": np.ones(1)}, np.zeros(1), np.zeros(1), {"mu": 1.0})

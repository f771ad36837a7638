"""Writer -> reader round trips: every supported space, infos with changing keys, frames."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

from demostudio.episode import (
    EpisodeWriter,
    find_episodes,
    index_nested,
    load_episode,
    open_episode,
    space_from_json,
    space_to_json,
    validate,
)

ATTRS = {
    "env_id": "Test-v0",
    "env_kwargs": {},
    "seed": 7,
    "controller": "policy:test",
    "recorded_at": "2026-11-21T12:00:00+00:00",
    "length": 0,
    "total_return": 0.0,
    "terminated": False,
    "truncated": False,
}

SPACES = {
    "box": spaces.Box(-1.0, np.array([1.0, 2.0, np.inf], dtype=np.float32), dtype=np.float32),
    "image": spaces.Box(0, 255, (48, 64, 3), dtype=np.uint8),
    "discrete": spaces.Discrete(5, start=-2),
    "multidiscrete": spaces.MultiDiscrete([3, 4, 2]),
    "multibinary": spaces.MultiBinary(6),
    "text": spaces.Text(12),
    "dict": spaces.Dict(
        {
            "image": spaces.Box(0, 255, (7, 7, 3), dtype=np.uint8),
            "direction": spaces.Discrete(4),
            "mission": spaces.Text(20),
        }
    ),
    "tuple": spaces.Tuple((spaces.Discrete(3), spaces.Box(-2, 2, (2,), dtype=np.float64))),
    "nested": spaces.Dict(
        {"a": spaces.Tuple((spaces.MultiBinary(2), spaces.Dict({"b": spaces.Discrete(2)})))}
    ),
}


def _assert_same(space: spaces.Space, stored, value) -> None:
    if isinstance(space, spaces.Dict):
        for k, s in space.spaces.items():
            _assert_same(s, stored[k], value[k])
    elif isinstance(space, spaces.Tuple):
        for s, a, b in zip(space.spaces, stored, value):
            _assert_same(s, a, b)
    elif isinstance(space, spaces.Text):
        assert stored == value
    else:
        np.testing.assert_array_equal(np.asarray(stored), np.asarray(value))


@pytest.mark.parametrize("name", list(SPACES))
def test_space_json_round_trip(name):
    space = SPACES[name]
    again = space_from_json(space_to_json(space))
    assert space_to_json(again) == space_to_json(space)
    assert again == space or isinstance(space, spaces.Text)


@pytest.mark.parametrize("name", list(SPACES))
def test_observations_and_actions_round_trip(tmp_path, name):
    space = SPACES[name]
    space.seed(3)
    obs = [space.sample() for _ in range(6)]
    acts = [space.sample() for _ in range(5)]
    path = tmp_path / "ep.h5"
    with EpisodeWriter(path, space, space, ATTRS) as w:
        w.reset(obs[0], {})
        for t in range(5):
            w.step(acts[t], obs[t + 1], float(t), False, t == 4, {})
    assert validate(path) == []
    data = load_episode(path)
    for t in range(6):
        _assert_same(space, index_nested(data.observations, t), obs[t])
    for t in range(5):
        _assert_same(space, index_nested(data.actions, t), acts[t])
    with open_episode(path) as ep:
        _assert_same(space, ep.observation(3), obs[3])
        _assert_same(space, ep.action(4), acts[4])
        assert ep.summary.truncated and not ep.summary.terminated
        assert ep.summary.total_return == pytest.approx(10.0)


def test_infos_with_keys_that_differ_between_reset_and_steps(tmp_path):
    space = spaces.Discrete(2)
    path = tmp_path / "ep.h5"
    with EpisodeWriter(path, space, space, ATTRS) as w:
        w.reset(0, {"seeds": [1, 2], "lives": 3, "nested": {"x": 1.5}})
        w.step(1, 1, 0.0, False, False, {"lives": 3, "frame_number": 4})
        w.step(0, 0, 1.0, False, False, {"lives": 2, "frame_number": 8, "label": "hit"})
        w.step(1, 1, 0.0, True, False, {"lives": 2.5, "frame_number": 12, "nested": {"x": 2.0}})
    with open_episode(path) as ep:
        assert ep.info(0) == {"seeds": [1, 2], "lives": 3, "nested/x": 1.5}
        assert ep.info(1) == {"lives": 3, "frame_number": 4}
        assert ep.info(2) == {"lives": 2, "frame_number": 8, "label": "hit"}
        # lives became 2.5: the int column cannot hold it, so the row is marked absent
        assert ep.info(3) == {"frame_number": 12, "nested/x": 2.0}
        data = ep.load()
    assert data.infos["frame_number"].tolist() == [0, 4, 8, 12]
    assert data.info_present["frame_number"].tolist() == [False, True, True, True]
    assert data.info_present["seeds"].tolist() == [True, False, False, False]
    assert data.info_present["lives"].tolist() == [True, True, True, False]
    assert data.info_present["label"].tolist() == [False, False, True, False]
    assert np.isnan(data.infos["nested/x"][1])
    assert validate(path) == []


def test_frames_are_lossless_one_chunk_each_and_deflated(tmp_path):
    rng = np.random.default_rng(0)
    frames = [rng.integers(0, 255, (40, 30, 3), dtype=np.uint8) for _ in range(4)]
    space = spaces.Discrete(2)
    path = tmp_path / "ep.h5"
    with EpisodeWriter(path, space, space, ATTRS) as w:
        w.reset(0, {}, frame=frames[0])
        for t in range(3):
            w.step(0, 0, 0.0, False, False, {}, frame=frames[t + 1], keys=["left", "up"])
    with open_episode(path) as ep:
        ds = ep.h5["frames"]
        assert ds.chunks == (1, 40, 30, 3) and ds.compression == "gzip"
        for i, f in enumerate(frames):
            np.testing.assert_array_equal(ep.frame(i), f)
            np.testing.assert_array_equal(ds[i], f)  # plain h5py reads it too
        assert ep.keys_at(2) == ["left", "up"]


def test_partial_name_while_writing_and_atomic_rename(tmp_path):
    space = spaces.Discrete(2)
    path = tmp_path / "ep.h5"
    w = EpisodeWriter(path, space, space, ATTRS)
    w.reset(0, {})
    w.step(1, 1, 1.0, True, False, {})
    assert (tmp_path / "ep.h5.partial").exists() and not path.exists()
    assert find_episodes(tmp_path) == []
    w.close()
    assert path.exists() and not (tmp_path / "ep.h5.partial").exists()
    assert find_episodes(tmp_path) == [path]


def test_discard_leaves_nothing(tmp_path):
    space = spaces.Discrete(2)
    w = EpisodeWriter(tmp_path / "ep.h5", space, space, ATTRS)
    w.reset(0, {})
    w.step(1, 1, 1.0, False, False, {})
    w.discard()
    assert list(tmp_path.iterdir()) == []


def test_full_queue_blocks_and_counts_instead_of_dropping(tmp_path):
    space = spaces.Box(0, 255, (64, 64, 3), dtype=np.uint8)
    path = tmp_path / "ep.h5"
    w = EpisodeWriter(path, space, spaces.Discrete(2), ATTRS, queue_size=2)
    rng = np.random.default_rng(1)
    w.reset(rng.integers(0, 255, (64, 64, 3), dtype=np.uint8), {})
    n = 300
    for _ in range(n):
        w.step(0, rng.integers(0, 255, (64, 64, 3), dtype=np.uint8), 1.0, False, False, {})
    w.close()
    assert w.blocked_puts > 0
    with open_episode(path) as ep:
        assert len(ep) == n and ep.h5["observations"].shape[0] == n + 1


def test_flush_happens_while_recording(tmp_path):
    import time

    from demostudio.episode.recover import recover_partial

    space = spaces.Discrete(2)
    w = EpisodeWriter(tmp_path / "ep.h5", space, space, ATTRS, flush_interval=0.05)
    w.reset(0, {})
    for _ in range(10):
        w.step(1, 1, 1.0, False, False, {})
    time.sleep(0.5)
    # Copy the live .partial (as a crash would leave it) and recover the copy.
    copy = tmp_path / "copy" / "ep.h5.partial"
    copy.parent.mkdir()
    copy.write_bytes((tmp_path / "ep.h5.partial").read_bytes())
    result = recover_partial(copy)
    w.close()
    assert result.episode is not None and result.steps == 10
    with open_episode(result.episode) as ep:
        assert ep.summary.recovered and ep.summary.truncated and len(ep) == 10
    assert validate(result.episode) == []


def test_observations_that_are_the_frame_are_stored_once(tmp_path):
    space = spaces.Box(0, 255, (21, 16, 3), dtype=np.uint8)
    rng = np.random.default_rng(2)
    frames = [rng.integers(0, 255, (21, 16, 3), dtype=np.uint8) for _ in range(6)]
    linked, split = tmp_path / "linked.h5", tmp_path / "split.h5"
    for path, odd_step in ((linked, None), (split, 3)):
        with EpisodeWriter(path, space, spaces.Discrete(2), ATTRS) as w:
            w.reset(frames[0], {}, frame=frames[0])
            for t in range(5):
                obs = frames[t + 1] if t != odd_step else frames[0]
                w.step(0, obs, 0.0, False, False, {}, frame=frames[t + 1])
        data = load_episode(path, frames=True)
        np.testing.assert_array_equal(data.frames, np.stack(frames))
        expected = [f if t != (odd_step or -9) + 1 else frames[0] for t, f in enumerate(frames)]
        np.testing.assert_array_equal(data.observations, np.stack(expected))
        assert validate(path) == []
        with open_episode(path) as ep:
            same = ep.h5["observations"].id == ep.h5["frames"].id
            assert same == (odd_step is None)


def test_writer_defers_to_a_busy_caller_but_never_for_long(tmp_path):
    import time

    from demostudio.episode.writer import MAX_DEFER_S

    space = spaces.Discrete(2)
    w = EpisodeWriter(tmp_path / "ep.h5", space, space, ATTRS)
    w.reset(0, {})
    time.sleep(0.05)
    w.caller_busy()  # a game tick starts
    w.step(1, 1, 1.0, False, False, {})
    time.sleep(MAX_DEFER_S / 5)
    assert w.written_steps == 0  # held off while the caller works
    w.caller_idle()  # the caller waits for its next tick
    deadline = time.monotonic() + 2
    while w.written_steps < 1 and time.monotonic() < deadline:
        time.sleep(0.001)
    assert w.written_steps == 1
    w.caller_busy()  # a caller that never idles again is only delayed, not stalled
    for _ in range(5):
        w.step(0, 0, 0.0, False, False, {})
    t0 = time.monotonic()
    w.close()
    assert time.monotonic() - t0 < 5 * MAX_DEFER_S + 1.0
    assert len(load_episode(tmp_path / "ep.h5")) == 6

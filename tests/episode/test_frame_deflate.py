"""Frames are deflated as hard as the writer's spare time allows: an Atari-sized frame at
level 9 while the writer keeps up (a third of level 1's bytes), a 600x400 render at level 1
(level 9 would cost its writer 9-23 ms a frame); every chunk reads back exactly."""

from __future__ import annotations

import time
import zlib

import numpy as np
from gymnasium import spaces

from demostudio.episode import EpisodeWriter, open_episode
from demostudio.episode._h5 import BEST_MAX_BYTES, DEFLATE_BEST, DEFLATE_LEVEL, deflate_level

ATTRS = {
    "env_id": "Test-v0", "env_kwargs": {}, "seed": 7, "controller": "policy:test",
    "recorded_at": "2026-11-28T12:00:00+00:00", "length": 0, "total_return": 0.0,
    "terminated": False, "truncated": False,
}  # fmt: skip


def _frames(n: int, shape: tuple[int, int, int]) -> list[np.ndarray]:
    """Game-like frames: a flat background with a few moving blocks and noise rows."""
    rng = np.random.default_rng(0)
    out = []
    for t in range(n):
        f = np.full(shape, 20, np.uint8)
        f[10:14, (5 * t) % (shape[1] - 8) :][:, :8] = 200
        f[shape[0] - 20 :, :, 0] = rng.integers(0, 255, (20, shape[1]), dtype=np.uint8)
        out.append(f)
    return out


def test_the_level_follows_the_frame_size_and_the_writers_backlog():
    atari = 210 * 160 * 3
    assert deflate_level(atari, keeping_up=True) == DEFLATE_BEST
    assert deflate_level(atari, keeping_up=False) == DEFLATE_LEVEL  # behind: catch up first
    assert deflate_level(400 * 600 * 3, keeping_up=True) == DEFLATE_LEVEL
    assert deflate_level(BEST_MAX_BYTES, keeping_up=True) == DEFLATE_BEST


def test_a_paced_recording_stores_atari_frames_at_the_best_level(tmp_path):
    frames = _frames(30, (210, 160, 3))
    obs_space = spaces.Discrete(2)
    path = tmp_path / "ep.h5"
    with EpisodeWriter(path, obs_space, spaces.Discrete(2), ATTRS) as w:
        w.reset(0, {}, frames[0])
        for t in range(1, len(frames)):
            w.step(0, 0, 0.0, False, False, {}, frames[t])
            time.sleep(0.01)  # paced like play: the writer keeps up
    with open_episode(path) as ep:
        dset = ep.h5["frames"]
        for i, frame in enumerate(frames):
            _, chunk = dset.id.read_direct_chunk((i, 0, 0, 0))
            assert len(chunk) == len(zlib.compress(frame.tobytes(), DEFLATE_BEST))
            assert np.array_equal(ep.frame(i), frame)

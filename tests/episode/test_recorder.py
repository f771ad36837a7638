"""The recording wrapper: seeds, metadata, episode boundaries, background closing."""

from __future__ import annotations

import numpy as np

from demostudio.controllers import scripted_controller
from demostudio.episode import (
    RecordEpisodes,
    find_episodes,
    load_episode,
    make_env,
    read_summary,
    validate,
    verify_episode,
)


def _play(rec: RecordEpisodes, episodes: int, seed: int | None = None) -> None:
    ctrl = scripted_controller("MountainCar-v0")
    for i in range(episodes):
        obs, _ = rec.reset(seed=None if seed is None else seed + i)
        done = False
        while not done:
            obs, _, term, trunc, _ = rec.step(ctrl.act(rec, obs))
            done = term or trunc


def test_fresh_64_bit_seed_per_reset_and_metadata(tmp_path):
    rec = RecordEpisodes(
        make_env("MountainCar-v0", render_mode="rgb_array"),
        tmp_path,
        controller="policy:test",
        player="bo",
        fps=30,
    )
    _play(rec, 2)
    rec.close()
    seeds = [read_summary(p).seed for p in rec.saved]
    assert len(set(seeds)) == 2 and all(0 <= s < 2**64 for s in seeds)
    s = read_summary(rec.saved[0])
    assert s.env_id == "MountainCar-v0" and s.attrs["max_episode_steps"] == 200
    assert s.controller == "policy:test" and s.player == "bo" and s.fps == 30
    assert s.attrs["env_spec"]["id"] == "MountainCar-v0"
    assert verify_episode(rec.saved[1]).ok


def test_keys_reset_mid_episode_and_close_keep_what_was_played(tmp_path):
    rec = RecordEpisodes(make_env("MountainCar-v0", render_mode="rgb_array"), tmp_path)
    rec.reset(seed=1)
    rec.set_keys(["left"])
    rec.step(0)
    rec.step(2)
    rec.reset(seed=2)  # the first episode is saved, cut short
    rec.step(1)
    rec.close()  # so is the second
    first, second = (load_episode(p) for p in rec.saved)
    assert len(first) == 2 and first.keys == [["left"], []] and first.summary.truncated
    assert len(second) == 1 and second.summary.seed == 2
    assert np.array_equal(first.actions, [0, 2])


def test_discard_and_zero_step_episodes_leave_no_file(tmp_path):
    rec = RecordEpisodes(make_env("MountainCar-v0", render_mode="rgb_array"), tmp_path)
    rec.reset()
    rec.step(0)
    rec.discard_episode()
    rec.reset()
    rec.close()
    assert rec.saved == [] and list(tmp_path.iterdir()) == []


def test_background_close_saves_every_episode(tmp_path):
    rec = RecordEpisodes(
        make_env("MountainCar-v0", render_mode="rgb_array"), tmp_path, background_close=True
    )
    _play(rec, 3, seed=10)
    assert len(rec.saved) == 3
    assert rec.wait_saved() == rec.saved
    assert find_episodes(tmp_path) == sorted(rec.saved)
    assert all(validate(p) == [] for p in rec.saved)
    rec.close()
    assert [read_summary(p).seed for p in rec.saved] == [10, 11, 12]

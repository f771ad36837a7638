"""agents.dataset: transitions and padded segments over an episode folder."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader

from agents.dataset import (
    FramedSegment,
    FramedTransition,
    Segment,
    SegmentDataset,
    Transition,
    TransitionDataset,
)
from demostudio.episode import EpisodeError, load_episode

torch.set_num_threads(1)


def test_transitions_match_the_episodes(demos):
    paths = demos["MountainCar-v0"]
    data = TransitionDataset(paths[0].parent)
    episodes = [load_episode(p) for p in data.paths]
    assert len(data) == sum(len(e) for e in episodes)
    i = 0
    for e, d in enumerate(episodes):
        for t in range(len(d)):
            item = data[i]
            assert isinstance(item, Transition)
            assert data.locate(i) == (e, t)
            assert torch.equal(item.obs, torch.from_numpy(d.observations[t]))
            assert torch.equal(item.next_obs, torch.from_numpy(d.observations[t + 1]))
            assert item.action.item() == d.actions[t]
            assert item.reward.dtype == torch.float32 and item.reward.item() == d.rewards[t]
            assert item.terminated.item() == d.terminations[t]
            assert item.truncated.item() == d.truncations[t]
            i += 1
    # The last step of a truncated episode says so.
    last = data[len(episodes[0]) - 1]
    assert last.terminated.item() or last.truncated.item()
    with pytest.raises(IndexError):
        data[len(data)]

    batch = next(iter(DataLoader(data, batch_size=32, shuffle=True)))
    assert isinstance(batch, Transition)
    assert batch.obs.shape == (32, 2) and batch.obs.dtype == torch.float32
    assert batch.action.shape == (32,) and batch.action.dtype == torch.int64
    assert batch.reward.shape == (32,) and batch.terminated.dtype == torch.bool


def test_transitions_with_dict_text_observations_and_frames(demos):
    paths = demos["MiniGrid-DoorKey-5x5-v0"]
    data = TransitionDataset(paths, frames=True)
    d = load_episode(data.paths[0], frames=True)
    item = data[2]
    assert isinstance(item, FramedTransition)
    assert item.obs["image"].dtype == torch.uint8
    assert torch.equal(item.obs["image"], torch.from_numpy(d.observations["image"][2]))
    assert item.obs["mission"] == d.observations["mission"][2]
    assert torch.equal(item.frame, torch.from_numpy(d.frames[2]))
    assert torch.equal(item.next_frame, torch.from_numpy(d.frames[3]))
    loader = DataLoader(data, batch_size=4, num_workers=2)
    batch = next(iter(loader))
    assert batch.obs["image"].shape == (4, 7, 7, 3)
    assert batch.obs["direction"].shape == (4,)
    assert len(batch.obs["mission"]) == 4 and isinstance(batch.obs["mission"][0], str)
    assert batch.frame.shape == (4, 160, 160, 3)
    data.close()


def test_segments_are_padded_at_episode_end_and_never_cross(demos):
    paths = demos["MiniGrid-DoorKey-5x5-v0"]
    episodes = [load_episode(p, frames=True) for p in sorted(paths)]
    L, period = 4, 3
    data = SegmentDataset(paths, L, period=period, frames=True)
    expected_windows = [(e, s) for e, d in enumerate(episodes) for s in range(0, len(d), period)]
    assert len(data) == len(expected_windows)
    for idx, (e, start) in enumerate(expected_windows):
        seg = data[idx]
        assert isinstance(seg, FramedSegment)
        assert (seg.episode, seg.start) == (e, start)
        d = episodes[e]
        n = min(L, len(d) - start)
        assert seg.mask.tolist() == [True] * n + [False] * (L - n)
        img = d.observations["image"]
        assert torch.equal(seg.obs["image"][: n + 1], torch.from_numpy(img[start : start + n + 1]))
        assert not seg.obs["image"][n + 1 :].any()  # zero padding
        assert seg.obs["mission"][n + 1 :] == [""] * (L - n)
        assert torch.equal(seg.action[:n], torch.from_numpy(d.actions[start : start + n]))
        assert not seg.action[n:].any() and not seg.reward[n:].any()
        assert np.allclose(seg.reward[:n].numpy(), d.rewards[start : start + n])
        assert torch.equal(seg.frames[: n + 1], torch.from_numpy(d.frames[start : start + n + 1]))
        assert not seg.frames[n + 1 :].any()
        # Only the last window of an episode can hold its terminal step.
        if seg.terminated.any():
            assert start + n == len(d)

    plain = SegmentDataset(paths, 5)
    assert isinstance(plain[0], Segment)
    batch = next(iter(DataLoader(plain, batch_size=2)))
    assert batch.obs["image"].shape == (2, 6, 7, 7, 3)
    assert batch.mask.shape == (2, 5) and batch.reward.shape == (2, 5)
    # Changing a returned tensor does not change the dataset.
    seg = plain[0]
    seg.reward[:] = 99
    assert plain[0].reward.max() < 99


def test_dataset_errors(demos, tmp_path):
    with pytest.raises(EpisodeError, match="found none"):
        TransitionDataset(tmp_path)
    with pytest.raises(EpisodeError, match="one dataset, one space"):
        TransitionDataset(demos["root"])
    with pytest.raises(ValueError, match="expected length >= 1, got 0"):
        SegmentDataset(demos["MountainCar-v0"], 0)


def test_frames_requested_from_frameless_episodes(tmp_path):
    from demostudio.cli.record_cmd import RecordConfig, record

    record(RecordConfig("CartPole-v1", episodes=1, out=tmp_path, frames=False), progress=False)
    with pytest.raises(EpisodeError, match="recorded without") as err:
        SegmentDataset(tmp_path, 8, frames=True)
    assert err.value.field == "frames"
    assert len(SegmentDataset(tmp_path, 8)) > 0

"""The shipped human-style samples (``demos/human-style/<env>/``): ten episodes of each task,
recorded like a person's, each reaching its goal, and clearly worse than the shipped expert
set beside them; the expert folders still hold only the expert's episodes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from demostudio.assets import SAMPLE_DEMOS
from demostudio.episode import read_summary

HUMAN = SAMPLE_DEMOS / "human-style"
TASKS = (
    "MiniGrid-DoorKey-8x8-v0",
    "MountainCar-v0",
    "MiniGrid-KeyCorridorS3R3-v0",
    "MiniGrid-ObstructedMaze-1Dlh-v0",
)


def _summaries(folder: Path):
    return [read_summary(p) for p in sorted(folder.glob("*.h5"))]


@pytest.mark.parametrize("env", TASKS)
def test_ten_human_style_episodes_that_reach_the_goal(env):
    episodes = _summaries(HUMAN / env)
    assert len(episodes) == 10
    for s in episodes:
        assert s.env_id == env and s.terminated and not s.truncated
        assert s.controller == "keyboard" and s.player == "scripted-human"
        assert s.attrs["human_style"]["expert"].startswith("policy:scripted-")
    assert sorted(s.seed for s in episodes) == list(range(10))


@pytest.mark.parametrize("env", ["MountainCar-v0", "MiniGrid-DoorKey-8x8-v0"])
def test_human_style_is_clearly_worse_than_the_expert(env):
    human, expert = _summaries(HUMAN / env), _summaries(SAMPLE_DEMOS / env)
    assert all(s.controller.startswith("policy:scripted-") for s in expert)
    h_len, e_len = (np.mean([s.length for s in x]) for x in (human, expert))
    h_ret, e_ret = (np.mean([s.total_return for s in x]) for x in (human, expert))
    assert h_len >= 1.25 * e_len and h_ret < e_ret
    if env == "MountainCar-v0":  # a person's 150-200 steps, the expert's 100-120
        assert 140 <= h_len <= 200 and e_len <= 125

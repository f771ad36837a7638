"""benchmarks/bench_rnd_ppo.py's DoorKey diagnostic: steps carrying the key and steps with
an open door in view, read from MiniGrid's symbolic views."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import gymnasium as gym
import numpy as np
from minigrid.core.world_object import Door, Key

PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_rnd_ppo.py"


def bench():
    spec = importlib.util.spec_from_file_location("bench_rnd_ppo", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_counts_by_hand():
    image = np.zeros((2, 3, 7, 7, 3), dtype=np.uint8)  # [B, L, W, H, 3]
    carried = Key("yellow").encode()
    image[0, 1, 3, 6] = carried  # the agent's cell: what it carries
    image[1, 2, 3, 6] = carried  # masked out below
    image[0, 0, 1, 2] = carried  # a key lying in view, not carried
    image[0, 2, 2, 2] = Door("yellow", is_open=True).encode()
    image[1, 0, 2, 2] = Door("yellow", is_locked=True).encode()  # closed: not counted
    mask = np.array([[True, True, True], [True, True, False]])
    assert bench().doorkey_progress(image, mask) == (1, 1)


def test_the_carried_key_in_a_real_view():
    env = gym.make("MiniGrid-DoorKey-5x5-v0")
    env.reset(seed=0)
    progress = bench().doorkey_progress
    image = env.unwrapped.gen_obs()["image"][None]
    assert progress(image, np.array([True]))[0] == 0
    env.unwrapped.carrying = Key("yellow")
    image = env.unwrapped.gen_obs()["image"][None]
    assert progress(image, np.array([True]))[0] == 1
    env.close()

"""Atari settings: frame shapes, frame stacks for the policy and the predictor, the same
stacks for live envs and recorded demos, and the sticky-action probability (seeded)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.wrappers import FrameStackObservation

from agents.rnd_ppo.atari import (
    ResizeGray,
    demo_frames,
    make_env,
    resize_gray,
    rnd_view,
    stack_frames,
    sticky_probability,
)
from agents.rnd_ppo.config import AtariSettings

ECHO_ID = "DemoStudioTest/ActionEcho-v0"


class ActionEcho(gym.Env):
    """Observation = the action the env received (as an RGB image whose pixels hold it)."""

    def __init__(self, episode_length: int = 200):
        self.action_space = spaces.Discrete(1000)
        self.observation_space = spaces.Box(0, 255, (60, 40, 3), np.uint8)
        self.episode_length = episode_length
        self.received: list[int] = []

    def _obs(self, value: int) -> np.ndarray:
        img = np.zeros((60, 40, 3), np.uint8)
        img[:, :, 0] = value % 256
        img[: value % 60, :, 1] = 255  # a pattern that survives the resize
        return img

    def reset(self, *, seed: int | None = None, options: Any = None):
        super().reset(seed=seed)
        self.t = 0
        return self._obs(0), {}

    def step(self, action):
        self.received.append(int(action))
        self.t += 1
        return self._obs(int(action)), 0.0, False, self.t >= self.episode_length, {}


if ECHO_ID not in gym.registry:
    gym.register(ECHO_ID, entry_point=ActionEcho)


def test_resize_gray_shapes_and_luma():
    rgb = np.zeros((2, 210, 160, 3), np.uint8)
    rgb[..., 0] = 100
    out = resize_gray(rgb, 84)
    assert out.shape == (2, 84, 84) and out.dtype == np.uint8
    assert int(out[0, 10, 10]) == round(0.299 * 100)
    assert resize_gray(np.full((1, 50, 50), 7, np.uint8), 42).shape == (1, 42, 42)
    with pytest.raises(ValueError, match=r"expected images \[N, H, W, 3\]"):
        resize_gray(np.zeros((1, 5, 5, 2), np.uint8), 42)


def test_live_stack_equals_demo_stack_and_rnd_sees_the_last_frame():
    settings = AtariSettings(frame_resize=36, frame_stack=4, rnd_frame_stack=1)
    env = FrameStackObservation(ResizeGray(ActionEcho(), 36), settings.frame_stack)
    raw = ActionEcho()
    obs, _ = env.reset(seed=0)
    raw_obs = [raw.reset(seed=0)[0]]
    live = [obs]
    for a in [5, 17, 29, 41, 53, 7]:
        live.append(env.step(a)[0])
        raw_obs.append(raw.step(a)[0])
    live = np.stack(live)
    assert live.shape == (7, 4, 36, 36) and live.dtype == np.uint8
    np.testing.assert_array_equal(demo_frames(np.stack(raw_obs), settings), live)
    # the first stack repeats the first frame; the predictor sees the newest frame only
    assert all(np.array_equal(live[0, j], live[0, 0]) for j in range(4))
    view = rnd_view(live, settings.rnd_frame_stack)
    assert view.shape == (7, 1, 36, 36)
    np.testing.assert_array_equal(view[:, 0], live[:, -1])


def test_stack_frames_indices():
    frames = np.arange(5)[:, None, None] * np.ones((1, 2, 2), int)
    stacked = stack_frames(frames, 3)
    assert stacked.shape == (5, 3, 2, 2)
    assert stacked[:, :, 0, 0].tolist() == [[0, 0, 0], [0, 0, 1], [0, 1, 2], [1, 2, 3], [2, 3, 4]]


def test_sticky_actions_repeat_with_the_given_probability():
    p = 0.25
    env = make_env(ECHO_ID, AtariSettings(sticky_action_probability=p))
    env.reset(seed=123)
    echo = env.unwrapped
    given, stuck, n = 0, 0, 20_000
    for t in range(n):
        action = t % 1000  # every action differs from the last 999, so a repeat is visible
        _, _, term, trunc, _ = env.step(action)
        if echo.t > 1:  # the first step of an episode has no previous action
            given += 1
            stuck += echo.received[-1] != action
        if term or trunc:
            env.reset()
    rate = stuck / given
    # binomial std at n = 20000 is 0.003: 5 std either side
    assert abs(rate - p) < 0.015, rate


def test_sticky_defaults_per_env_kind():
    assert sticky_probability("ALE/Pong-v5", AtariSettings()) == 0.25
    assert sticky_probability("MountainCar-v0", AtariSettings()) == 0.0
    assert sticky_probability("MountainCar-v0", AtariSettings(sticky_action_probability=0.1)) == 0.1
    plain = make_env(ECHO_ID, AtariSettings())
    plain.reset(seed=0)
    for a in range(300):
        plain.step(a % 1000)
    assert plain.unwrapped.received == [a % 1000 for a in range(300)]


def test_montezuma_env_with_paper_settings():
    pytest.importorskip("ale_py")
    settings = AtariSettings(sticky_action_probability=0.1)
    env = make_env("ALE/MontezumaRevenge-v5", settings)
    obs, info = env.reset(seed=0)
    assert obs.shape == (4, 84, 84) and obs.dtype == np.uint8
    assert env.observation_space.shape == (4, 84, 84)
    assert info["room"] == 1 and info["rooms_visited"] == 1
    ale = env.unwrapped.ale
    assert ale.getFloat("repeat_action_probability") == pytest.approx(0.1)
    assert ale.getInt("max_num_frames_per_episode") == 18_000
    assert ale.getInt("frame_skip") in (0, 1)  # the env skips frames itself (frameskip=4)
    assert env.unwrapped._frameskip == 4
    obs, _, _, _, info = env.step(0)
    assert rnd_view(obs, 1).shape == (1, 84, 84)
    assert info["rooms_visited"] == 1

"""The RND paper's Atari settings as gymnasium wrappers and batch functions.

The live env and recorded demos go through the same functions, so a policy trained on one
reads the other::

    live:   gym.make(ALE id, frameskip, sticky p, frame limit) -> [RoomsVisited]
            -> ResizeGray(size) -> FrameStackObservation(k)         obs [k, size, size] uint8
    demos:  episode observations [T+1, H, W, 3] -> resize_gray -> stack_frames(k)
                                                                     obs [T+1, k, size, size]

* Frames: grey (ITU-R 601 luma), area-resized to ``size x size`` (84 in the paper).
* Frame stacks: the policy sees the last ``frame_stack`` frames; the RND networks see only
  the last ``rnd_frame_stack`` of them (:func:`rnd_view`), one frame in the paper.
  A stack at an episode start repeats the first frame (gymnasium's ``padding_type="reset"``).
* Sticky actions (Machado et al. 2018): with probability p the previous action is
  repeated. ALE envs do it per emulator frame inside the frame skip (the paper's setting,
  p = 0.25); other envs get gymnasium's per-step ``StickyAction`` wrapper when p is given.
"""

from __future__ import annotations

from typing import Any, TypeVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.wrappers import FrameStackObservation, StickyAction

from agents.rnd_ppo.config import AtariSettings, is_ale
from demostudio.episode import make_env_with_kwargs
from demostudio.episode.envs import refusing_kwargs

ALE_STICKY_DEFAULT = 0.25
"""Sticky-action probability of ALE envs when none is given (the RND paper's)."""

ROOM_RAM_ADDRESS = {"MontezumaRevenge": 3, "Pitfall": 1}
"""RAM byte holding the current room, per game (as in the RND paper's code)."""

Frames = TypeVar("Frames")


def sticky_probability(env_id: str, settings: AtariSettings) -> float:
    """The sticky-action probability for ``env_id``: the given one, or (none given) 0.25
    for ALE envs and 0 for the others."""
    if settings.sticky_action_probability is not None:
        return float(settings.sticky_action_probability)
    return ALE_STICKY_DEFAULT if is_ale(env_id) else 0.0


def ale_make_kwargs(env_id: str, settings: AtariSettings) -> dict[str, Any]:
    """``gym.make`` keyword arguments of an ALE env with the paper's settings."""
    kwargs: dict[str, Any] = {
        "frameskip": settings.frame_skip,
        "repeat_action_probability": sticky_probability(env_id, settings),
        "full_action_space": False,
    }
    if settings.max_episode_frames > 0:
        kwargs["max_num_frames_per_episode"] = settings.max_episode_frames
    return kwargs


def resize_gray(images: np.ndarray, size: int) -> np.ndarray:
    """``[N, H, W, 3]`` RGB, ``[N, H, W, 1]`` or ``[N, H, W]`` grey uint8 ->
    ``[N, size, size]`` uint8 grey (luma 0.299 R + 0.587 G + 0.114 B, area resize)."""
    from PIL import Image

    arr = np.asarray(images)
    if arr.ndim == 4 and arr.shape[-1] == 1:
        arr = arr[..., 0]
    if arr.ndim not in (3, 4) or (arr.ndim == 4 and arr.shape[-1] != 3):
        raise ValueError(f"expected images [N, H, W, 3] or [N, H, W], got shape {arr.shape}")
    mode = "RGB" if arr.ndim == 4 else "L"
    out = np.empty((len(arr), size, size), np.uint8)
    for i, img in enumerate(arr.astype(np.uint8, copy=False)):
        pil = Image.fromarray(img, mode=mode).convert("L")
        out[i] = np.asarray(pil.resize((size, size), Image.Resampling.BOX))
    return out


class ResizeGray(gym.ObservationWrapper):
    """Image observation ``[H, W, 3]`` / ``[H, W]`` -> ``[size, size]`` uint8 grey."""

    def __init__(self, env: gym.Env, size: int):
        super().__init__(env)
        space = env.observation_space
        if not (
            isinstance(space, spaces.Box) and space.dtype == np.uint8 and len(space.shape) >= 2
        ):
            raise ValueError(f"expected a uint8 image observation space, got {space}")
        self.size = int(size)
        self.observation_space = spaces.Box(0, 255, (self.size, self.size), np.uint8)

    def observation(self, observation: np.ndarray) -> np.ndarray:
        return resize_gray(np.asarray(observation)[None], self.size)[0]


def stack_frames(frames: np.ndarray, k: int) -> np.ndarray:
    """``[T+1, H, W]`` frames of one episode -> ``[T+1, k, H, W]``, entry ``[t, j]`` being
    frame ``max(0, t - k + 1 + j)`` (the first frame repeats, as FrameStackObservation)."""
    if k < 1:
        raise ValueError(f"expected a frame stack k >= 1, got {k}")
    frames = np.asarray(frames)
    steps = np.arange(len(frames))[:, None] - (k - 1) + np.arange(k)[None, :]
    return frames[np.clip(steps, 0, None)]


def rnd_view(obs: Frames, n: int) -> Frames:
    """The last ``n`` frames of stacked observations ``[..., k, H, W]`` (numpy or torch):
    the RND networks' input."""
    return obs[..., -n:, :, :]  # type: ignore[index]


class RoomsVisited(gym.Wrapper):
    """Adds ``info["room"]`` (the room the player is in, read from the RAM) and
    ``info["rooms_visited"]`` (distinct rooms so far this episode) for games with rooms
    (Montezuma's Revenge, Pitfall)."""

    def __init__(self, env: gym.Env, address: int):
        super().__init__(env)
        self.address = int(address)
        self._rooms: set[int] = set()

    def _room(self) -> int:
        return int(self.env.unwrapped.ale.getRAM()[self.address])

    def _annotate(self, info: dict[str, Any]) -> dict[str, Any]:
        room = self._room()
        self._rooms.add(room)
        return {**info, "room": room, "rooms_visited": len(self._rooms)}

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self._rooms = set()
        return obs, self._annotate(info)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, reward, terminated, truncated, self._annotate(info)


def room_address(env_id: str) -> int | None:
    """The RAM address of the room for ``env_id``'s game, or None."""
    return next((a for game, a in ROOM_RAM_ADDRESS.items() if game in env_id), None)


def make_env(
    env_id: str,
    settings: AtariSettings,
    make_kwargs: dict[str, Any] | None = None,
    render_mode: str | None = None,
) -> gym.Env:
    """One env with the paper's settings; ``make_kwargs`` (the user's --env-kwargs) win.

    ALE: frame skip, per-frame sticky actions and the frame limit in the env, rooms in
    the info (where the game has rooms), grey resized frames stacked ``frame_stack`` deep.
    Other envs: as made, with per-step sticky actions when a probability is given."""
    kwargs = dict(make_kwargs or {})
    extra = {} if render_mode is None else {"render_mode": render_mode}
    if is_ale(env_id):
        import ale_py

        gym.register_envs(ale_py)
        with refusing_kwargs(kwargs):  # ale-py's refusal of the user's kwargs: one line
            env = gym.make(env_id, **{**ale_make_kwargs(env_id, settings), **kwargs, **extra})
        address = room_address(env_id)
        if address is not None:
            env = RoomsVisited(env, address)
        return FrameStackObservation(ResizeGray(env, settings.frame_resize), settings.frame_stack)
    env = make_env_with_kwargs(env_id, kwargs, **extra)
    p = sticky_probability(env_id, settings)
    return StickyAction(env, p) if p > 0 else env


def demo_frames(observations: np.ndarray, settings: AtariSettings) -> np.ndarray:
    """A recorded episode's image observations ``[T+1, H, W, 3]`` -> the policy's input
    ``[T+1, frame_stack, size, size]`` uint8, exactly what :func:`make_env` gives live."""
    return stack_frames(resize_gray(observations, settings.frame_resize), settings.frame_stack)


__all__ = [
    "ALE_STICKY_DEFAULT",
    "ROOM_RAM_ADDRESS",
    "ResizeGray",
    "RoomsVisited",
    "ale_make_kwargs",
    "demo_frames",
    "is_ale",
    "make_env",
    "resize_gray",
    "rnd_view",
    "room_address",
    "stack_frames",
    "sticky_probability",
]

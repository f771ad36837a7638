"""ALE envs stepped as one batch by ale-py's own vector env (C++ threads).

The actors step a list of Gymnasium envs one after the other in Python. With
``--atari-vector ale`` and an env the agent makes as plain ``gym.make(ALE id, ...)``,
:func:`open_batch_envs` builds ale-py's ``AtariVectorEnv`` with the same emulator settings
instead (it steps the envs in parallel where cores are free; on a busy 2-core machine it
measures the same as the list, ``benchmarks/results/atari-vector``), and
:class:`AleBatchEnvs` hands the actor what the list would have:

* the same frames: full 210x160 screens (RGB, or gray for ``obs_type="grayscale"``),
  bit for bit what ``AtariEnv`` returns, so the actor's one preprocess (gray 84x84, the
  one demos and evaluation go through) turns them into the same observations. The
  vector env's own resize and frame stacks are off: its area resize differs from the
  preprocess's by up to ~60 gray levels on sprite edges;
* the same dynamics: frame skip and sticky actions per emulator frame inside ALE, the
  frame limit as truncation, raw rewards, no no-op starts, no FIRE on reset, no life
  loss as an episode end;
* the same episode boundaries: next-step autoreset, as the list's stepping does (on the
  step after an episode ends an env only resets: reward 0, neither flag).

What differs: the last screen of an episode is the one an emulator frame before the frame
that ended it (the vector env stops the frame skip at the game's end before reading the
screen; ``AtariEnv`` reads it after); the step's reward and flags are the same. And the
sticky-action draws for a given reset seed (``AtariEnv`` derives the emulator's seed from
the reset seed, the vector env uses it as is), so a run is reproducible per backend, not
across them.

Anything else (wrappers such as RND-PPO's frame stacks, ``--fixed-layout``, a step limit,
a stochastic frame skip, game modes, RAM observations) keeps the list of envs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import gymnasium as gym
import numpy as np

AtariVector = Literal["ale", "python"]
"""How the actors step ALE envs: ale-py's vector env (``ale``) or a list of envs."""

NO_FRAME_LIMIT = 2**31 - 1
"""The vector env's frame limit for an env without one (it truncates at a limit of 0)."""

_MADE_BY_GYM = ("OrderEnforcing", "PassiveEnvChecker")
"""Wrappers ``gym.make`` puts around every env; they change no step."""


def ale_settings(env: gym.Env) -> dict | None:
    """The ``AtariVectorEnv`` keyword arguments that step as ``env`` steps, or None when
    ``env`` is not a plain ALE env the vector env can reproduce."""
    try:
        from ale_py.env import AtariEnv
    except ImportError:
        return None
    base = env.unwrapped
    if not isinstance(base, AtariEnv):
        return None
    layer = env
    while layer is not base:
        if type(layer).__name__ not in _MADE_BY_GYM:
            return None
        layer = layer.env  # type: ignore[attr-defined]
    if (
        not isinstance(base._frameskip, int)
        or base._obs_type not in ("rgb", "grayscale")
        or base.continuous
        or base._game_mode is not None
        or base._game_difficulty is not None
    ):
        return None
    limit = int(base.ale.getInt("max_num_frames_per_episode"))  # 0: none
    full = len(base._action_set) == len(base.ale.getLegalActionSet())
    height, width = base.observation_space.shape[:2]
    return {
        "game": base._game,
        "frameskip": base._frameskip,
        "repeat_action_probability": float(base.ale.getFloat("repeat_action_probability")),
        "max_num_frames_per_episode": limit if limit > 0 else NO_FRAME_LIMIT,
        "full_action_space": full,
        "grayscale": base._obs_type == "grayscale",
        "img_height": height,
        "img_width": width,
    }


class AleBatchEnvs:
    """``num_envs`` ALE envs as one ``AtariVectorEnv``: raw screens in, the actor's batch
    layout out (``[N, 210, 160, 3]`` or ``[N, 210, 160]`` uint8)."""

    def __init__(self, settings: dict, num_envs: int, space: gym.Space, num_threads: int = 0):
        from ale_py.vector_env import AtariVectorEnv

        self.num_envs = num_envs
        self.observation_space = space
        """One env's space (the list's ``envs[0].observation_space``)."""
        self.vec = AtariVectorEnv(
            num_envs=num_envs,
            num_threads=num_threads,
            autoreset_mode="NextStep",
            stack_num=1,
            maxpool=False,
            noop_max=0,
            use_fire_reset=False,
            reward_clipping=False,
            episodic_life=False,
            **settings,
        )

    def reset(self, seed: int) -> np.ndarray:
        """Env i reset with ``seed + i``: the first screens ``[N, ...]``."""
        obs, _ = self.vec.reset(seed=np.arange(seed, seed + self.num_envs, dtype=np.int64) % 2**31)
        return obs[:, 0]

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """One step of every env (next-step autoreset: an env whose episode ended on the last
        step only resets, reward 0, neither flag): screens, rewards (float64),
        terminated, truncated."""
        obs, reward, terminated, truncated, _ = self.vec.step(np.asarray(actions, np.int64))
        return obs[:, 0], reward.astype(np.float64), terminated, truncated

    def close(self) -> None:
        self.vec.close()


def open_batch_envs(
    make_env: Callable[[], gym.Env], num_envs: int, choice: AtariVector, num_threads: int = 0
) -> AleBatchEnvs | None:
    """ale-py's vector env for ``num_envs`` copies of what ``make_env`` makes, when
    ``choice`` is ``ale`` and that env is a plain ALE env; otherwise None (the caller
    steps a list of envs)."""
    if choice != "ale":
        return None
    probe = make_env()
    try:
        settings = ale_settings(probe)
        space = probe.observation_space
    finally:
        probe.close()
    if settings is None:
        return None
    return AleBatchEnvs(settings, num_envs, space, num_threads)


__all__ = ["AleBatchEnvs", "AtariVector", "ale_settings", "open_batch_envs"]

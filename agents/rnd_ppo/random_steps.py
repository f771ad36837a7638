"""Observations of a uniformly random policy, before training: what RND's observation
statistics start from (``RNDPPO.start``, --obs-norm-init-steps) and, with
--policy-obs-norm-steps, the standardisation of the policy's vector input.

Why the policy's: MountainCar's velocity is bounded by +-0.07, so the core's bounds
scaling gives the network a velocity of about +-0.07 while a random policy moves the car
(its std is 0.0055); the policy then cannot tell which way the car rolls and settles on a
constant push. Standardised, the velocity is about +-1 there, and the swing (push the way
the car rolls) is one ReLU away.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import gymnasium as gym
import numpy as np

from agents.core.preprocess import ObsSpec
from agents.rnd_ppo.normalize import RunningMeanStd


def random_policy_observations(
    make_env: Callable[[], gym.Env], num_envs: int, steps: int, num_actions: int, seed: int
) -> Iterator[Any]:
    """The raw observation batches (``num_envs`` each) after each of ``steps`` uniformly
    random actions; the envs are reset with ``seed + 500``, the actions drawn from
    ``seed + 7``, and closed when the iterator ends."""
    envs = gym.vector.SyncVectorEnv([make_env for _ in range(num_envs)])
    rng = np.random.default_rng(seed + 7)
    try:
        obs, _ = envs.reset(seed=seed + 500)
        for _ in range(steps):
            obs, *_ = envs.step(rng.integers(0, num_actions, num_envs))
            yield obs
    finally:
        envs.close()


def standardised_spec(spec: ObsSpec, batches: Iterable[dict[str, np.ndarray]]) -> ObsSpec:
    """``spec`` with each ``vector`` leaf's ``center`` and ``half`` set to the mean and std
    of that leaf over the preprocessed ``batches`` (``{leaf: [N, n]}``), so the network
    feeds ``(x - mean) / std``; a dimension that never varied keeps half 1. Other leaves
    are returned unchanged."""
    stats = {k: RunningMeanStd(leaf.shape) for k, leaf in spec.items() if leaf.kind == "vector"}
    for batch in batches:
        for k, rms in stats.items():
            rms.update(batch[k])
    out = dict(spec)
    for k, rms in stats.items():
        if rms.count == 0:
            continue
        std = np.sqrt(rms.var)
        half = np.where(std > 1e-6, std, 1.0)
        out[k] = dataclasses.replace(
            spec[k],
            center=tuple(float(x) for x in rms.mean),
            half=tuple(float(x) for x in half),
        )
    return out


__all__ = ["random_policy_observations", "standardised_spec"]

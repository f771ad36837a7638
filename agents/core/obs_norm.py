"""Observations of a uniformly random policy, before training: with
--policy-obs-norm-steps N (every algorithm) the network's vector input is standardised by
the mean and std of N such steps, and RND's observation statistics start from them
(``RNDPPO.start``, --obs-norm-init-steps).

Why: without it the core maps a vector's *bounded* dimensions to [-1, 1] by the space's
bounds and leaves unbounded ones as they are, which can put the dimensions that matter far
below the others. MountainCar's velocity is bounded by +-0.07, so the network sees about
+-0.07 while a random policy moves the car (std 0.0055); the policy cannot tell which way
the car rolls and settles on a constant push. CartPole's pole angle is bounded by
+-0.42 rad (twice where the episode ends), so a balanced pole (+-0.02 rad) reaches the
network as +-0.05 next to velocities of +-0.5, and the cart position (+-4.8) as +-0.2 for a
cart 1 from the centre. Standardised, each dimension is about +-1 where the agent starts
out.

The statistics are taken once, before the networks are built, from the run's seed (a
resumed run takes the same ones), and stored in the network spec (each leaf's ``center``
and ``half``), so a checkpoint carries them and every actor, evaluation and ``watch`` feeds
the network the same input.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import gymnasium as gym
import numpy as np

from agents.core.preprocess import ObsSpec, Preprocessor
from agents.core.running_stats import RunningMeanStd


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
        half = np.where(rms.std > 1e-6, rms.std, 1.0)
        out[k] = dataclasses.replace(
            spec[k],
            center=tuple(float(x) for x in rms.mean),
            half=tuple(float(x) for x in half),
        )
    return out


def random_steps_spec(
    spec: ObsSpec,
    make_env: Callable[[], gym.Env],
    preprocess: Preprocessor,
    num_actions: int,
    steps: int,
    seed: int,
) -> ObsSpec:
    """``spec`` standardised (:func:`standardised_spec`) by ``steps`` uniformly random
    steps in one env (:func:`random_policy_observations`); ``steps`` 0: ``spec`` as is."""
    if steps <= 0:
        return spec
    batches = (preprocess(obs) for obs in random_policy_observations(
        make_env, 1, steps, num_actions, seed))  # fmt: skip
    return standardised_spec(spec, batches)


__all__ = ["random_policy_observations", "random_steps_spec", "standardised_spec"]

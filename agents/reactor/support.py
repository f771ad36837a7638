"""The distributional critic's default value support ``[v_min, v_max]`` for an env.

The support must hold every discounted return the critic can be asked for, and no more: a
support too narrow clips the returns (MountainCar's are negative), one too wide wastes the
atoms (MiniGrid's returns are in [0, 1]). The rule::

    reward bounds     per step [r_lo, r_hi] (--reward-clip on: clipped to [-1, 1]), or per
                      episode [G_lo, G_hi] where the env pays a bounded sum (a success bonus)
    horizon           H = sum_{t < T} gamma^t = (1 - gamma^T) / (1 - gamma), T the env's
                      step limit (max_episode_steps, or MiniGrid's max_steps); 1 / (1 - gamma)
                      without one
    returns           per step: [min(0, r_lo) H, max(0, r_hi) H]; per episode:
                      [min(0, G_lo), max(0, G_hi)], within [-H, H] when rewards are clipped
    support           the returns widened by MARGIN of their width on each side, rounded
                      outwards to 2 decimals

The reward bounds come from the env family (the module of its unwrapped class), or the
fallback [-1, 1] per step (Atari and any other env whose rewards are not known here: fine
with --reward-clip; otherwise give --v-min / --v-max). Examples at gamma = 0.99:

    CartPole-v1         +1 per step, T = 500        [0, 99.34]    -> [-9.94, 109.28]
    MountainCar-v0      -1 per step, T = 200        [-86.6, 0]    -> [-95.27, 8.67]
    Acrobot-v1          -1 or 0 per step, T = 500   [-99.34, 0]   -> [-109.28, 9.94]
    LunarLander-v3      [-300, 300] per episode     [-300, 300]   -> [-360, 360]
    MiniGrid-*          one reward in [0, 1]        [0, 1]        -> [-0.1, 1.1]
"""

from __future__ import annotations

import math
from typing import Literal, NamedTuple

import gymnasium as gym


class RewardBounds(NamedTuple):
    """The rewards an env pays: bounds per step, or on the sum over an episode."""

    lo: float
    hi: float
    per: Literal["step", "episode"]


KNOWN: dict[str, RewardBounds] = {
    # classic control: a constant reward per step until the end
    "gymnasium.envs.classic_control.cartpole": RewardBounds(0.0, 1.0, "step"),
    "gymnasium.envs.classic_control.mountain_car": RewardBounds(-1.0, 0.0, "step"),
    "gymnasium.envs.classic_control.acrobot": RewardBounds(-1.0, 0.0, "step"),
    # Box2D: landing scores 100-140 for the approach plus 100 for coming to rest, a crash
    # -100, firing the engines a little per step; 200 is the documented solve mark
    "gymnasium.envs.box2d.lunar_lander": RewardBounds(-300.0, 300.0, "episode"),
    # MiniGrid / BabyAI: one reward at success, 1 - 0.9 * steps / max_steps, else 0
    "minigrid": RewardBounds(0.0, 1.0, "episode"),
}
"""Reward bounds by the module (or package) of an env's unwrapped class."""
FALLBACK = RewardBounds(-1.0, 1.0, "step")
"""Rewards of an env not in :data:`KNOWN` (unit scale, as Atari's once clipped)."""
MARGIN = 0.1
"""Room on each side of the return bounds, as a share of their width."""


def reward_bounds(env: gym.Env) -> RewardBounds:
    """The env family's reward bounds (:data:`KNOWN`), else :data:`FALLBACK`."""
    module = type(env.unwrapped).__module__
    for prefix, bounds in KNOWN.items():
        if module == prefix or module.startswith(prefix + "."):
            return bounds
    return FALLBACK


def step_limit(env: gym.Env) -> int | None:
    """Steps after which the env truncates an episode (None: no limit known)."""
    limit = env.spec.max_episode_steps if env.spec is not None else None
    if limit is None:
        limit = getattr(env.unwrapped, "max_steps", None)  # MiniGrid's own limit
    return int(limit) if isinstance(limit, int) and limit > 0 else None


def discounted_horizon(discount: float, steps: int | None) -> float:
    """``sum_{t < steps} discount^t`` (``1 / (1 - discount)`` for no limit)."""
    if steps is None:
        if discount >= 1.0:
            raise ValueError(
                "--v-min/--v-max: expected values for an env with no step limit at "
                "--discount 1 (its returns have no bound), got none"
            )
        return 1.0 / (1.0 - discount)
    if discount >= 1.0:
        return float(steps)
    return (1.0 - discount**steps) / (1.0 - discount)


def return_bounds(env: gym.Env, discount: float, reward_clip: bool) -> tuple[float, float]:
    """The discounted returns the critic may see (see the module docstring)."""
    bounds = reward_bounds(env)
    horizon = discounted_horizon(discount, step_limit(env))
    if bounds.per == "episode":
        lo, hi = min(0.0, bounds.lo), max(0.0, bounds.hi)
        return (max(lo, -horizon), min(hi, horizon)) if reward_clip else (lo, hi)
    lo, hi = bounds.lo, bounds.hi
    if reward_clip:
        lo, hi = max(lo, -1.0), min(hi, 1.0)
    return min(0.0, lo) * horizon, max(0.0, hi) * horizon


def default_support(env: gym.Env, discount: float, reward_clip: bool) -> tuple[float, float]:
    """``(v_min, v_max)`` for ``env``: its return bounds with a margin (module docstring)."""
    lo, hi = return_bounds(env, discount, reward_clip)
    room = MARGIN * max(hi - lo, 1e-6)
    # round(.., 6) first: -0.1 * 100 is -10.000000000000002, which floor would take to -11
    return (
        math.floor(round((lo - room) * 100, 6)) / 100,
        math.ceil(round((hi + room) * 100, 6)) / 100,
    )


__all__ = [
    "FALLBACK",
    "KNOWN",
    "MARGIN",
    "RewardBounds",
    "default_support",
    "discounted_horizon",
    "return_bounds",
    "reward_bounds",
    "step_limit",
]

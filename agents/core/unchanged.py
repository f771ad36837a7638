"""Demo steps that changed nothing (``--demo-unchanged-steps``): the next observation equals
this one, the step paid no reward and the episode went on. A person's pause before starting
or after a sub-goal, a press that did nothing (MiniGrid's "done", a pickup with nothing in
front) or a walk into a wall is such a step.

Such a step says nothing about how to act: the same observation is followed, one or a few
steps later, by the demonstrator's real move. Learned as a demonstration (the large-margin
loss ranks its action first, behaviour cloning copies it) it teaches the wait itself, in an
observation the demonstrator also left by moving on; a greedy policy that picks the wait
never sees anything else, and loops on it until the time limit. With ``skip`` these steps
are left out of what the losses learn, exactly as an agent's steps before a
take-over are: the recurrent state still reads them and an n-step target that reaches one
bootstraps from its observation. An expert's demos (a planner's) have none, so either
leaves learning from them as it is.

``skip-loops`` widens "changed nothing" from one step to a stretch: from an observation,
through any steps, back to the same observation with no reward on the way. A wrong turn
turned back, a walk away and back, a random press undone: the round trip got nowhere, and
learned as a demonstration it teaches its first move in an observation the demonstrator
later left the other way. A single unchanged step is the one-step round trip. Continuous
observations (MountainCar) never repeat exactly, so there it leaves every step as it is.
It is the default. On MiniGrid-DoorKey-8x8, from the 10 human-style demos, R2D3 reached a
median success of .55 at 40k env steps against .20 with ``skip`` (3 seeds), and a final
return of 0.74 against 0.24 at 60k on seed 0 (benchmarks/results/r2d3-doorkey-human).
Where two different places look alike (a long blank wall in a partial view), a stretch
between them is taken for a round trip and not learned from; the recurrent state still
reads it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from demostudio.episode import EpisodeData, observation_leaves


def unchanged_steps(episode: EpisodeData) -> np.ndarray:
    """``[T]`` bool: the steps of ``episode`` that changed nothing (see the module doc): every
    observation leaf at ``t + 1`` equals the one at ``t``, reward 0, neither terminated nor
    truncated."""
    n = len(episode)
    if n == 0:
        return np.zeros(0, bool)
    same = (episode.rewards == 0) & ~episode.terminations & ~episode.truncations
    for leaf in _leaves(episode):
        same &= (leaf[1:].reshape(n, -1) == leaf[:-1].reshape(n, -1)).all(axis=1)
    return same


def round_trip_steps(episode: EpisodeData) -> np.ndarray:
    """``[T]`` bool: the steps of ``episode`` on a round trip (see the module doc), the union
    of every stretch from an observation to a later equal one with no reward paid between."""
    n = len(episode)
    leaves = _leaves(episode)
    # observations between the same two paid steps share a stretch number
    stretch = np.concatenate([[0], np.cumsum(np.asarray(episode.rewards) != 0)])
    keys = [(int(stretch[t]), _observation_key(leaves, t)) for t in range(n + 1)]
    last = {key: t for t, key in enumerate(keys)}
    out, reach = np.zeros(n, bool), 0
    for t in range(n):
        reach = max(reach, last[keys[t]])
        out[t] = reach > t
    return out


def _leaves(episode: EpisodeData) -> list[np.ndarray]:
    """The observation's leaves, ``[T+1, ...]`` each (ValueError when one is not)."""
    n = len(episode)
    leaves = [np.asarray(leaf) for leaf in observation_leaves(episode.observations)]
    for leaf in leaves:
        if len(leaf) != n + 1:
            raise ValueError(f"expected {n + 1} observations for {n} steps, got {len(leaf)}")
    return leaves


def _observation_key(leaves: list[np.ndarray], t: int) -> bytes:
    """Observation ``t`` as bytes equal for equal observations (a text leaf by its value)."""
    parts = []
    for leaf in leaves:
        value = leaf[t]
        parts.append(repr(value).encode() if leaf.dtype == object else value.tobytes())
        parts.append(b"\0")
    return b"".join(parts)


def skip_unchanged(
    episodes: Sequence[EpisodeData], masks: Sequence[np.ndarray], loops: bool = False
) -> tuple[list[np.ndarray], int]:
    """``masks`` (``[T]`` bool per episode: the steps learned from) less each episode's
    unchanged steps (with ``loops``, its round trips too), and how many of the masked steps
    that took away."""
    find = round_trip_steps if loops else unchanged_steps
    still = [find(e) & m for e, m in zip(episodes, masks, strict=True)]
    return [m & ~s for m, s in zip(masks, still)], sum(int(s.sum()) for s in still)


__all__ = ["round_trip_steps", "skip_unchanged", "unchanged_steps"]

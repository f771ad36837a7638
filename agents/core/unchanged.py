"""Demo steps that changed nothing (``--demo-unchanged-steps``): the next observation equals
this one, the step paid no reward and the episode went on. A person's pause before starting
or after a sub-goal, a press that did nothing (MiniGrid's "done", a pickup with nothing in
front) or a walk into a wall is such a step.

Such a step says nothing about how to act: the same observation is followed, one or a few
steps later, by the demonstrator's real move. Learned as a demonstration (the large-margin
loss ranks its action first, behaviour cloning copies it) it teaches the wait itself, in an
observation the demonstrator also left by moving on; a greedy policy that picks the wait
never sees anything else, and loops on it until the time limit. With ``skip`` (the default)
these steps are left out of what the losses learn, exactly as an agent's steps before a
take-over are: the recurrent state still reads them and an n-step target that reaches one
bootstraps from its observation. An expert's demos (a planner's) have none, so ``skip``
leaves learning from them as it is.
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
    for leaf in map(np.asarray, observation_leaves(episode.observations)):
        if len(leaf) != n + 1:
            raise ValueError(f"expected {n + 1} observations for {n} steps, got {len(leaf)}")
        same &= (leaf[1:].reshape(n, -1) == leaf[:-1].reshape(n, -1)).all(axis=1)
    return same


def skip_unchanged(
    episodes: Sequence[EpisodeData], masks: Sequence[np.ndarray]
) -> tuple[list[np.ndarray], int]:
    """``masks`` (``[T]`` bool per episode: the steps learned from) less each episode's
    unchanged steps, and how many of the masked steps that took away."""
    still = [unchanged_steps(e) & m for e, m in zip(episodes, masks, strict=True)]
    return [m & ~s for m, s in zip(masks, still)], sum(int(s.sum()) for s in still)


__all__ = ["skip_unchanged", "unchanged_steps"]

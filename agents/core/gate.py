"""The deployment gate (``--gate-episodes K``): what evaluation, ``evaluate`` and ``watch``
play is the last network that passed a test, not whatever the learner holds at that moment.

Before each scheduled evaluation the learner's acting network (the challenger) plays up to
``K`` episodes with the evaluation policy, from reset seeds of the gate's own. It is
deployed when every one of its ``K`` episodes returns at least the bar: the deployed
network's worst test episode minus ``--gate-margin`` (the first challenger always is; its
worst episode sets the bar). The test stops at the first episode below the bar, so a
challenger that fails costs little. Otherwise the deployed network stays. The learner and
the actors always go on with the latest weights: the gate chooses only what is shown and
saved as the agent's policy, as AlphaGo Zero's evaluator kept its best player (Silver et al.
2017) while training went on.

Why the worst episode and not the mean: a deployed network is judged later by evaluations
of a few episodes each, and one bad start in one of them is a dip. A network that fails one
start in ten passes a 5-episode test of its mean more often than not (measured on CartPole,
2 of 11 seeds: such networks were deployed and then evaluated at 403 and 460); the worst of
``K`` episodes asks for ``K`` good starts in a row.

The test episodes are real env steps: they count in ``--total-env-steps`` (the budget, the
clock of evaluations and schedules) and in ``counters["gate_steps"]``; they are not learned
from (no sequences, and the replay ratio counts only the actors' steps, so they bring no
updates). A test starts only while the tests so far have taken at most ``--gate-share`` of
the env steps: ten CartPole episodes of 500 steps before every evaluation took most of the
budget, and a seed that learned slowly was starved of updates. With a noisy return the
worst of ``K`` episodes varies a lot between equally good networks: a margin of about the
spread of returns lets an equal challenger through.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import torch

from agents.core.checkpoint import CheckpointError

SEED_OFFSET = 500_000_000
"""Test episodes' reset seeds start at ``seed + SEED_OFFSET + clock`` (evaluation uses
``seed + 10_000 + clock``): the gate never plays the starts an evaluation plays."""


class DeployGate:
    def __init__(self, episodes: int, margin: float, share: float = 1.0):
        self.episodes = int(episodes)
        self.margin = float(margin)
        self.share = float(share)
        self.weights: dict[str, torch.Tensor] | None = None
        """The deployed network's weights (None until a first test)."""
        self.score = -math.inf
        """The deployed network's worst test episode."""
        self.version = -1
        """Learner updates of the deployed weights."""

    @property
    def active(self) -> bool:
        return self.episodes > 0

    def test_seed(self, seed: int, clock: int) -> int:
        return (seed + SEED_OFFSET + clock) % 2**31

    def due(self, env_steps: int, gate_steps: int) -> bool:
        """A test may start: nothing is deployed yet, or the tests so far have taken at most
        ``share`` of the run's ``env_steps``."""
        return self.weights is None or gate_steps <= self.share * env_steps

    @property
    def bar(self) -> float:
        """The return every test episode of a challenger must reach (-inf: none deployed)."""
        return self.score - self.margin

    def judge(
        self, returns: list[float], weights: Mapping[str, torch.Tensor], version: int
    ) -> bool:
        """Deploy ``weights`` (learner ``version``) when their test ``returns`` (the episodes
        played, fewer than ``episodes`` when the test stopped at one below the bar) earn it."""
        if len(returns) < self.episodes or min(returns) < self.bar:
            return False
        self.weights = {k: v.detach().clone() for k, v in weights.items()}
        self.score, self.version = float(min(returns)), int(version)
        return True

    def state_dict(self) -> dict[str, Any]:
        """Tensors and plain numbers only (a checkpoint loads with ``weights_only=True``)."""
        return {"weights": self.weights, "score": self.score, "version": self.version}

    def load_state_dict(self, payload: Mapping[str, Any], like: Mapping[str, torch.Tensor]) -> None:
        """The deployed network of a checkpoint ``payload`` (checked by
        :func:`deployed_weights`), whose weights must have the keys and shapes of ``like``
        (the acting network's): a CheckpointError naming the field otherwise."""
        weights = deployed_weights(payload)
        if weights is None:
            return
        for key, want in like.items():
            got = weights.get(key)
            if got is None or tuple(got.shape) != tuple(want.shape):
                shape = "none" if got is None else tuple(got.shape)
                raise CheckpointError(
                    payload.get("path", "checkpoint"),
                    f"expected {key} of shape {tuple(want.shape)}, got {shape}",
                    "deployed.weights",
                )
        self.weights = {k: weights[k] for k in like}
        self.version, self.score = deployed_summary(payload)


def deployed_weights(payload: Mapping[str, Any]) -> Mapping[str, torch.Tensor] | None:
    """A checkpoint's deployed weights (None: no gate, or nothing passed yet); a
    CheckpointError naming the file and the field when they are not a dict of tensors."""
    state = payload.get("deployed")
    weights = state.get("weights") if isinstance(state, Mapping) else state
    if weights is None:
        return None

    def refuse(got: str) -> CheckpointError:
        where = payload.get("path", "checkpoint")
        return CheckpointError(where, f"expected a dict of tensors, got {got}", "deployed.weights")

    if not isinstance(weights, Mapping):
        raise refuse("text" if isinstance(weights, str) else type(weights).__name__)
    for key, value in weights.items():
        if not isinstance(value, torch.Tensor):
            raise refuse(f"{type(value).__name__} for {str(key)[:80]!r}")
    score = state.get("score") if isinstance(state, Mapping) else None
    if not isinstance(score, (int, float)) or isinstance(score, bool):
        raise CheckpointError(
            payload.get("path", "checkpoint"), f"expected a number, got {score!r:.80}",
            "deployed.score",
        )  # fmt: skip
    return weights


def deployed_summary(payload: Mapping[str, Any]) -> tuple[int, float]:
    """``(learner updates, worst test episode)`` of a checkpoint's deployed network, once
    :func:`deployed_weights` has found one (an unreadable update count reads -1)."""
    state = payload["deployed"]
    version = state.get("version")
    known = isinstance(version, int) and not isinstance(version, bool)
    return (version if known else -1), float(state["score"])


__all__ = ["SEED_OFFSET", "DeployGate", "deployed_summary", "deployed_weights"]

"""The deployment gate (``--gate-episodes K``): what evaluation, ``evaluate`` and ``watch``
play is the network with the best test record, not whatever the learner holds at that moment.

Before each scheduled evaluation the learner's acting network (the challenger) plays up to
``K`` episodes with the evaluation policy, from reset seeds of the gate's own, each to
``--gate-horizon`` times the env's step limit. It passes when every one of its ``K``
episodes returns at least the best test episode seen so far (by any network, its own
included) minus ``--gate-margin``: it must be as good as anything the run has shown on every
start it plays. A network that passes is deployed, and from then on only a network that
passes replaces it. Until one has passed, the deployed network is provisional: of the
networks that played a whole test (all ``K`` episodes), the one whose worst episode is the
highest (the latest of equals); before the first test, evaluation plays the learner's
latest, as without a gate. A test stops at the first episode after which it can earn
nothing (it can no longer pass, and a network has passed or the episode is below the
provisional network's worst), so a challenger that fails costs little. The learner and the
actors always go on with the latest weights: the gate chooses only what is shown and saved
as the agent's policy, as AlphaGo Zero's evaluator kept its best player (Silver et al. 2017)
while training went on.

Why every episode against the best seen: a network on its way to the env's best fails some
starts, and one bad start in an evaluation is a dip. A mean over the test episodes lets such
a network through, and so does its worst episode compared with the deployed network's worst
(the first network is deployed unopposed, and the bar is whatever it played). Against the
best seen, once any test episode has reached CartPole's 500, only a network that reaches it
from every test start is deployed (CartPole-v1 measurements:
``benchmarks/results/reactor-cartpole-ablation-40k``).

Why longer test episodes: a CartPole network that plays 500 from every start tried may still
let its cart drift, and one that reaches the track's edge near step 500 runs off it from an
occasional start. Played to several times the step limit, such networks fail where the
networks that hold every evaluation do not: what a test at the limit cannot tell apart, a
longer one can.

Why provisional networks: with longer tests a first pass comes later, and the learner's
latest network, shown until then, dips in between. Why a whole test: a provisional network
chosen on the episodes a stopped test had played would often be chosen on one episode.

The test episodes are real env steps: they count in ``--total-env-steps`` (the budget, the
clock of evaluations and schedules) and in ``counters.gate_steps``; they are not learned
from (no sequences, and the replay ratio counts only the actors' steps, so they bring no
updates); a test that starts before the budget is spent plays its episodes to the end, so a
run may end up to one test past ``--total-env-steps``. Once a network has passed, a test
starts only while the tests so far have taken at most ``--gate-share`` of the env steps (ten
tests of 500 steps before every evaluation can take most of a 40k budget, starving a run
that learns slowly). With a noisy return no network plays its best on every start: a margin of
about the spread of a good network's returns lets it through (margin 0 and a noisy return:
nothing passes, and evaluation plays the provisional network throughout).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import torch

from agents.core.checkpoint import CheckpointError

SEED_OFFSET = 500_000_000
"""Test episodes' reset seeds start at ``seed + SEED_OFFSET + clock`` (evaluation uses
``seed + 10_000 + clock``): the gate never plays the starts an evaluation plays."""


class DeployGate:
    def __init__(self, episodes: int, margin: float, share: float = 1.0, horizon: float = 1.0):
        self.episodes = int(episodes)
        self.margin = float(margin)
        self.share = float(share)
        self.horizon = float(horizon)
        """The test episodes' step limit as a multiple of the env's (:func:`lengthen`)."""
        self.weights: dict[str, torch.Tensor] | None = None
        """The deployed network's weights (None until a first whole test or pass)."""
        self.score = -math.inf
        """The deployed network's worst test episode."""
        self.version = -1
        """Learner updates of the deployed weights."""
        self.best = -math.inf
        """The best test episode of any network so far."""
        self.passed = False
        """A network has passed a test; until one has, the deployed network is provisional:
        of those that played a whole test, the one whose worst episode is the highest."""

    def test_seed(self, seed: int, clock: int) -> int:
        return (seed + SEED_OFFSET + clock) % 2**31

    def due(self, env_steps: int, gate_steps: int) -> bool:
        """A test may start: no network has passed yet, or the tests so far have taken at
        most ``share`` of the run's ``env_steps``."""
        return not self.passed or gate_steps <= self.share * env_steps

    def cannot_pass(self, returns: list[float]) -> bool:
        """The test so far (``returns``, one per episode played) cannot pass: an episode
        below the best seen (the earlier tests' and these) minus the margin."""
        return bool(returns) and min(returns) < max(self.best, max(returns)) - self.margin

    def cannot_lead(self, returns: list[float]) -> bool:
        """The test so far cannot make its network the provisional one: a network has
        passed, or an episode is below the provisional network's worst."""
        return self.passed or (bool(returns) and min(returns) < self.score)

    def hopeless(self, returns: list[float]) -> bool:
        """The test so far can earn nothing: stop it (its remaining episodes unplayed)."""
        return self.cannot_pass(returns) and self.cannot_lead(returns)

    def judge(
        self, returns: list[float], weights: Mapping[str, torch.Tensor], version: int
    ) -> bool:
        """Deploy ``weights`` (learner ``version``) when their test ``returns`` (the episodes
        played; fewer than ``episodes`` when the test was stopped as hopeless) earn it:
        every one of ``episodes`` passes; or, while nothing has passed, all were played and
        their worst is at least the provisional network's."""
        complete = len(returns) >= self.episodes
        passed = complete and not self.cannot_pass(returns)
        lead = complete and not self.cannot_lead(returns)
        self.best = max(self.best, *returns)
        if passed or lead:
            self.weights = {k: v.detach().clone() for k, v in weights.items()}
            self.score, self.version = float(min(returns)), int(version)
            self.passed = self.passed or passed
        return passed

    def state_dict(self) -> dict[str, Any]:
        """Tensors and plain numbers only (a checkpoint loads with ``weights_only=True``)."""
        return {"weights": self.weights, "score": self.score, "version": self.version,
                "best": self.best, "passed": self.passed}  # fmt: skip

    def load_state_dict(self, payload: Mapping[str, Any], like: Mapping[str, torch.Tensor]) -> None:
        """The gate of a checkpoint ``payload`` (checked by :func:`deployed_weights`): the
        deployed weights must have the keys and shapes of ``like`` (the acting network's);
        a CheckpointError naming the field otherwise."""
        state = payload.get("deployed")
        best = state.get("best", -math.inf) if isinstance(state, Mapping) else -math.inf
        if not isinstance(best, (int, float)) or isinstance(best, bool) or math.isnan(best):
            where = payload.get("path", "checkpoint")
            raise CheckpointError(where, f"expected a number, got {best!r:.80}", "deployed.best")
        self.best = float(best)
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
        self.version, self.score, self.passed = deployed_summary(payload)
        self.best = max(self.best, self.score)


def lengthen(env: gym.Env, factor: float) -> int | None:
    """Raise ``env``'s step limit (its gymnasium TimeLimit wrapper's) to ``factor`` times
    itself, at least one step; the new limit, or None when no TimeLimit wraps the env (its
    episodes then end as the env's own rules say, MiniGrid's max_steps for one)."""
    inner = env
    while isinstance(inner, gym.Wrapper):
        if isinstance(inner, gym.wrappers.TimeLimit):
            inner._max_episode_steps = max(1, round(inner._max_episode_steps * factor))
            return inner._max_episode_steps
        inner = inner.env
    return None


def deployed_weights(payload: Mapping[str, Any]) -> Mapping[str, torch.Tensor] | None:
    """A checkpoint's deployed weights (None: no gate, or nothing deployed yet); a
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
    passed = _passed(state)
    if not isinstance(passed, bool):
        where = payload.get("path", "checkpoint")
        raise CheckpointError(where, f"expected true or false, got {passed!r:.80}",
                              "deployed.passed")  # fmt: skip
    return weights


def deployed_summary(payload: Mapping[str, Any]) -> tuple[int, float, bool]:
    """``(learner updates, worst test episode, passed)`` of a checkpoint's deployed network,
    once :func:`deployed_weights` has found one (an unreadable update count reads -1;
    ``passed`` False: provisional, no network had passed a test)."""
    state = payload["deployed"]
    version = state.get("version")
    known = isinstance(version, int) and not isinstance(version, bool)
    return (version if known else -1), float(state["score"]), _passed(state)


def _passed(state: Mapping[str, Any]) -> Any:
    """A checkpoint's ``deployed.passed`` as written (checked by :func:`deployed_weights`); a
    checkpoint written before provisional networks existed deployed only a pass."""
    return state.get("passed", True)


__all__ = ["SEED_OFFSET", "DeployGate", "deployed_summary", "deployed_weights", "lengthen"]

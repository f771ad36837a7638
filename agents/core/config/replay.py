"""The config group of the prioritized agent replay and the replay ratio."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from agents.core.config.base import ConfigGroup, require, require_unit
from agents.core.config.interact import InteractConfig
from agents.core.config.sequences import SequenceConfig
from agents.core.replay import MIXABLE_KINDS, ReplayKind


@dataclass
class ReplayConfig(ConfigGroup):
    """The prioritized agent replay and the replay ratio."""

    # --- replay ----------------------------------------------------------------------------
    replay_capacity: int = 10_000
    """Agent replay size in sequences."""
    min_replay: int = 64
    """Sequences in the agent replay before learning starts."""
    env_steps_per_update: float = 4.0
    """Replay ratio: one learner update per this many env steps (all actors together)."""
    priority_alpha: float = 0.6
    """Priority exponent alpha (0 = uniform sampling)."""
    priority_beta: float = 0.6
    """Importance-weight exponent beta."""
    priority_beta_final: float | None = None
    """Anneal --priority-beta linearly to this over --priority-beta-steps env steps, then hold
    it (Schaul et al. 2016 anneal beta to 1: full correction once learning settles); none: a
    fixed beta. One beta serves every buffer of a batch (agent and demo replay)."""
    priority_beta_steps: int = 0
    """Env steps over which --priority-beta anneals to --priority-beta-final."""
    priority_eta: float = 0.9
    """Sequence priority = eta * max|delta| + (1 - eta) * mean|delta|."""
    replay_kind: ReplayKind = "proportional"
    """How the agent replay is sampled: uniform, proportional (p^alpha), rank (1/rank^alpha)
    or greedy (the highest priorities first)."""
    replay_uniform_share: float = 0.0
    """Share of the agent replay's draws made uniformly, the rest by --replay-kind
    (proportional or rank): P(i) = (1 - u) P_kind(i) + u / N, the importance weights from that
    P(i). Replays sequences whose stored priorities went stale (a priority is refreshed only
    when its sequence is replayed)."""

    limits: ClassVar[dict[str, float]] = {"replay_capacity": 10_000_000}

    def check(self) -> None:
        require(self, ("replay_capacity",), 1)
        require(self, ("min_replay",), 0)
        if self.min_replay > self.replay_capacity:
            raise ValueError(
                f"--min-replay: expected <= --replay-capacity ({self.replay_capacity}): "
                f"learning starts once the agent replay holds --min-replay sequences, so it "
                f"would never start, got {self.min_replay}"
            )
        require(self, ("env_steps_per_update",), 0.0, strict=True)
        require_unit(
            self,
            (
                "priority_alpha",
                "priority_eta",
                "priority_beta",
                "priority_beta_final",
                "replay_uniform_share",
            ),
        )
        if self.replay_uniform_share and self.replay_kind not in MIXABLE_KINDS:
            raise ValueError(
                f"--replay-uniform-share: expected 0 with --replay-kind {self.replay_kind} "
                f"(a share mixes uniform draws into proportional or rank), got "
                f"{self.replay_uniform_share}"
            )
        require(self, ("priority_beta_steps",), 0)

    def advice(self) -> list[str]:
        if not isinstance(self, InteractConfig):  # no env-step budget to compare with
            return []
        budget = self.total_env_steps
        out = []
        period = int(self.period) if isinstance(self, SequenceConfig) else 1
        start = self.min_replay * period  # about one sequence per --period env steps
        if self.min_replay and start > budget:
            out.append(
                f"--min-replay {self.min_replay}: learning starts once the agent replay holds "
                f"{self.min_replay} sequences (about one per --period {period} env steps: "
                f"~{start:,} env steps), but --total-env-steps is {budget:,}: the run may end "
                f"without learning from its own experience (lower --min-replay)"
            )
        if self.env_steps_per_update > budget:
            out.append(
                f"--env-steps-per-update {self.env_steps_per_update:g}: one update per that "
                f"many env steps, more than --total-env-steps {budget:,}: the run ends "
                f"without an update from its own experience"
            )
        return out

"""R2D3's config: R2D2's plus the demo replay, its mixing ratio and the episode memory."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from agents.core.config import (
    ConfigGroup,
    DemoConfig,
    DemoMixConfig,
    DemoReplayConfig,
    MarginConfig,
    require,
    require_unit,
)
from agents.core.preprocess import ObsSpec, spatial_leaves
from agents.core.replay import ReplayKind
from agents.r2d2.config import R2D2Config


@dataclass
class EpisodeMemoryConfig(ConfigGroup):
    """The best agent episodes so far, mixed into batches like the demos."""

    # --- replay ----------------------------------------------------------------------------
    episode_memory_ratio: float = 0.0
    """Probability that a batch element comes from the best agent episodes so far (0: off)."""
    episode_memory_capacity: int = 2_000
    """Episode memory size in sequences."""
    episode_memory_kind: ReplayKind = "proportional"
    """How the episode memory is sampled: uniform, proportional, rank or greedy (as
    --replay-kind)."""

    limits: ClassVar[dict[str, float]] = {"episode_memory_capacity": 10_000_000}

    def check(self) -> None:
        require_unit(self, ("episode_memory_ratio",))
        require(self, ("episode_memory_capacity",), 1)


@dataclass
class R2D3Config(
    EpisodeMemoryConfig, MarginConfig, DemoMixConfig, DemoReplayConfig, DemoConfig, R2D2Config
):
    """R2D3: R2D2 with a prioritized demo replay mixed into every batch."""

    # R2D3's defaults: one learner update per 2 env steps and 10-step returns (the demos'
    # reward reaches the start of an episode sooner). MountainCar-v0 with one demo, seed 0,
    # 12k env steps: R2D2's 4 env steps per update and 5-step returns never reached the flag;
    # these reached it at 8k (-137); see benchmarks/bench_agents.py mountaincar.
    env_steps_per_update: float = 2.0
    n_step: int = 10
    # A target copy every 100 updates (R2D2's 500): the demo's return climbs its episode n
    # steps per copy. MountainCar-v0, one demo, 10k env steps, 3 seeds: 500 never reached
    # -120, 100 reached it in 3 of 3 (median 7.5k; benchmarks/results/r2d3-mountaincar-40k).
    target_update_every: int = 100
    # The mlp grid encoder (NetworkConfig's default is conv): half the update cost, and what
    # R2D3's DoorKey-8x8 result was measured with (benchmarks/results/r2d3-doorkey-100k).
    grid_encoder: Literal["conv", "mlp"] = "mlp"
    # An evaluation every 1,000 env steps (the core's 5,000): with demos a run often plays
    # as well as its demos within a few thousand steps, and the stop rule can end it only at
    # an evaluation. MountainCar's five 200-step episodes cost a few percent of a run.
    eval_every: int = 1_000
    lambda_margin: float | None = None
    """Weight of DQfD's large-margin loss on demo steps (0: off, the R2D3 paper's loss).
    Default per observation space: 1 with a grid or image leaf (MiniGrid, Atari: a few demos
    must carry over to new layouts), 0 with vector observations only (classic control,
    Box2D: there it pins the agent to the demonstrator's return instead of beating it)."""

    def check(self) -> None:
        top = max(self.demo_ratio, self.demo_ratio_final or 0.0) + self.episode_memory_ratio
        if top > 1.0:
            raise ValueError(
                f"--demo-ratio + --episode-memory-ratio: expected a sum <= 1, got {top}"
            )


def default_margin_weight(spec: ObsSpec) -> float:
    """``--lambda-margin``'s default for an observation spec (see R2D3Config)."""
    return 1.0 if spatial_leaves(spec) else 0.0


__all__ = ["EpisodeMemoryConfig", "R2D3Config", "default_margin_weight"]

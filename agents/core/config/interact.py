"""The config group of runs that step envs: the budget, checkpoints, --resume, the stop
rule and the deployment gate."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from agents.core.config.base import ConfigGroup, require
from agents.core.config.run import RunConfig


@dataclass
class InteractConfig(ConfigGroup):
    """Runs that step envs: the budget, checkpoints and --resume."""

    # --- run -------------------------------------------------------------------------------
    total_env_steps: int = 100_000
    """Stop after this many environment steps (all actors together)."""
    resume: bool = False
    """Continue from the checkpoint with the most env steps in run_dir (with its replay if
    --save-replay was on); `demostudio train` reuses the run's saved config, changing only
    the flags given."""
    save_replay: bool = False
    """Save the agent replay (and episode memory) with every checkpoint, as
    checkpoints/replay.npz, so --resume continues with it; large for image observations."""
    checkpoint_every: int = 25_000
    """Save a checkpoint every this many env steps (and always at the end)."""
    checkpoint_minutes: float = 5.0
    """Also save a checkpoint when this many minutes have passed since the last one, so that
    a kill -9 or a power cut costs at most that much work however slow the task (0: off)."""
    keep_checkpoints: int = 3
    """How many periodic checkpoints to keep (the final one is always kept)."""
    # --- evaluation and gate ---------------------------------------------------------------
    stop_when: Literal["auto", "demos", "threshold", "off"] = "auto"
    """When the run has learned and stops before its budget (the budget is then a cap):
    auto: at the demos' mean return with demos, else at the env's reward threshold (CartPole:
    475), else never; demos or threshold: that one; off: the whole budget runs. A given
    --stop-return takes its place (agents/core/stop_rule.py)."""
    stop_return: float | None = None
    """Stop once an evaluation's mean return reaches this (instead of --stop-when's target)."""
    stop_evals: int = 1
    """Stop once the mean of the last this many evaluations' returns reaches the target (1:
    the first evaluation that does; more asks for a result that holds)."""

    gate_episodes: int = 0
    """Deployment gate (0: off): before an evaluation the learner's network plays up to this
    many test episodes (env steps of the budget, not learned from) and becomes the deployed
    network, the one evaluation, evaluate and watch play, when every one returns at least
    the best test episode seen so far minus --gate-margin (until one does, they play the
    network with the highest worst episode over a whole test); a test stops once it can
    earn neither (agents/core/gate.py)."""
    gate_margin: float = 0.0
    """With --gate-episodes: how far below the best test episode seen each of a challenger's
    test episodes may be and it still be deployed (0 for a return with a known top, as
    CartPole's 500; about the spread of a good network's returns for a noisy one, else none
    is ever deployed)."""
    gate_share: float = 0.25
    """With --gate-episodes: once a network has passed, the most of the env steps the tests
    may take; a test starts only while the tests so far have taken at most this share (the
    learner keeps the rest). A test begun before the budget is spent plays to its end (up to
    one test past it)."""
    gate_horizon: float = 1.0
    """With --gate-episodes: the test episodes' step limit as a multiple of the env's own
    (gymnasium's TimeLimit; 1: as evaluation plays). Longer tests find a network that holds
    only until the limit cuts it off (CartPole: a cart drifting to the track's edge)."""

    limits: ClassVar[dict[str, float]] = {"gate_episodes": 10_000, "gate_horizon": 1_000,
                                          "total_env_steps": 100_000_000_000,
                                          "checkpoint_minutes": 10_000_000}  # fmt: skip

    def check(self) -> None:
        require(self, ("total_env_steps", "checkpoint_every"), 1)
        require(self, ("keep_checkpoints", "gate_episodes", "gate_margin", "checkpoint_minutes"), 0)
        require(self, ("stop_evals", "gate_horizon"), 1)
        if not 0.0 < self.gate_share <= 1.0:
            raise ValueError(f"--gate-share: expected in (0, 1], got {self.gate_share}")

    def advice(self) -> list[str]:
        every = self.eval_every if isinstance(self, RunConfig) else 0  # the gate tests then
        if self.gate_episodes and not 0 < every < self.total_env_steps:
            return [f"--gate-episodes {self.gate_episodes} has no effect: the gate tests before "
                    f"each evaluation and --eval-every {every} gives none within "
                    f"--total-env-steps {self.total_env_steps} (lower --eval-every)"]  # fmt: skip
        return []

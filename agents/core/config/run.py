"""The run's config group: env, seed, device, output folder, logging and evaluation."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from agents.core.config.base import ConfigGroup, require, require_unit


@dataclass
class RunConfig(ConfigGroup):
    """The run: env, seed, device, output folder, logging and evaluation."""

    # --- env -------------------------------------------------------------------------------
    env: str | None = None
    """Gymnasium env id to train on (required unless every demo was recorded on one env)."""
    env_kwargs: str = "{}"
    """Extra gymnasium.make keyword arguments as JSON, e.g. '{"max_episode_steps": 500}'
    (no render_mode: each command chooses its own; a saved config's is left out)."""
    # --- run -------------------------------------------------------------------------------
    seed: int = 0
    """Seed for envs, sampling, exploration, network init and evaluation episodes."""
    # --- env -------------------------------------------------------------------------------
    fixed_layout: bool = False
    """Reset every episode (training and evaluation) with --seed: one layout of a
    procedurally generated env such as MiniGrid, the 'singleton' setting of the RND paper."""
    # --- run -------------------------------------------------------------------------------
    device: Literal["auto", "cpu", "cuda"] = "auto"
    """Torch device for the learner and actors (auto: cuda when available)."""
    run_dir: Path | None = None
    """Output folder (metrics, TensorBoard, checkpoints); default runs/<algo>-<env>-s<seed>."""
    progress: bool = True
    """Show a progress bar."""
    tensorboard: bool = True
    """Write TensorBoard scalars to run_dir/tb."""
    torch_threads: int = 1
    """torch.set_num_threads for training (small nets are fastest single-threaded)."""

    # --- evaluation and gate ---------------------------------------------------------------
    eval_every: int = 5_000
    """Evaluate the policy every this many steps of the run's clock (env steps; updates
    for offline algorithms) (0: only at the end)."""
    eval_episodes: int = 5
    """Episodes per evaluation."""
    eval_epsilon: float | None = None
    """Exploration epsilon during evaluation (default: 0.05 with grid or image observations,
    where a greedy policy can repeat an action that changes nothing to the time limit; 0,
    greedy, otherwise)."""

    limits: ClassVar[dict[str, float]] = {"torch_threads": 1024, "eval_episodes": 100_000}

    def check(self) -> None:
        require(self, ("eval_episodes", "torch_threads"), 1)
        require(self, ("eval_every",), 0)
        require_unit(self, ("eval_epsilon",))
        kwargs = self._parsed_kwargs()
        if not isinstance(kwargs, dict):
            raise ValueError(f"--env-kwargs: expected a JSON object, got {self.env_kwargs!r}")
        if "render_mode" in kwargs:
            raise ValueError(
                "--env-kwargs: expected no render_mode (each command chooses how its envs "
                f"render: `demostudio watch RUN` shows the agent), got {self.env_kwargs!r}"
            )

    def _parsed_kwargs(self) -> Any:
        try:
            return json.loads(self.env_kwargs or "{}")
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"--env-kwargs: expected JSON, got {self.env_kwargs!r} ({exc})"
            ) from None

    def make_kwargs(self) -> dict[str, Any]:
        """The kwargs without ``render_mode``: how an env renders is the command's to say
        (none in training and evaluate, a window in watch), never a saved config's."""
        kwargs = self._parsed_kwargs()
        if isinstance(kwargs, dict):
            kwargs.pop("render_mode", None)
        return kwargs

"""The config group of vectorized actors with an Ape-X epsilon ladder."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from agents.core.config.actor_procs import ActorProcsConfig
from agents.core.config.base import require, require_unit


@dataclass
class ActorConfig(ActorProcsConfig):
    """Vectorized actors with an Ape-X epsilon ladder, in this process or in Ray processes."""

    # --- algorithm -------------------------------------------------------------------------
    num_actors: int = 4
    """Vectorized environments stepped together, each with its own epsilon (per actor process
    with --actor-procs)."""
    epsilon_base: float = 0.4
    """Ape-X ladder: actor i explores with epsilon_base ** (1 + epsilon_alpha * i / (N - 1))."""
    epsilon_alpha: float = 7.0
    """Ape-X ladder exponent spread."""

    limits: ClassVar[dict[str, float]] = {"num_actors": 1024}

    def check(self) -> None:
        require(self, ("num_actors",), 1)
        require_unit(self, ("epsilon_base",))
        require(self, ("epsilon_alpha",), 0)

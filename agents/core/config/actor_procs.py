"""The config group of actors in other processes (Ray)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from agents.core.config.base import ConfigGroup, require


@dataclass
class ActorProcsConfig(ConfigGroup):
    """Actors in other processes (Ray): the pool's settings, for any algorithm's actors."""

    # --- distributed -----------------------------------------------------------------------
    actor_procs: int = 0
    """Step the actors in this many Ray processes, each with --num-actors envs and a CPU copy
    of the policy; learner and replay stay here (0: actors in this process)."""
    ray_address: str | None = None
    """Join the Ray cluster at this address (host:port) instead of starting a local one."""
    ray_auth: bool = True
    """Ray token authentication (RAY_AUTH_MODE=token); turn it off only on a trusted network."""
    weight_sync_every: int = 10
    """With --actor-procs: send the learner's weights to the actor processes every this many
    updates (one ray.put per sync)."""
    actor_chunk_steps: int = 50
    """With --actor-procs: env steps per env an actor process takes per request; experience
    comes back as the sequences those steps completed."""

    # --- env -------------------------------------------------------------------------------
    atari_vector: Literal["ale", "python"] = "python"
    """ALE envs made plainly (no wrappers): step them one after the other in Python (python)
    or with ale-py's vector env in C++ threads (ale: the same frames and episodes; it pays
    where cores are free, on a busy 2-core machine it measures the same)."""

    limits: ClassVar[dict[str, float]] = {"actor_procs": 256, "actor_chunk_steps": 100_000}

    def check(self) -> None:
        require(self, ("weight_sync_every", "actor_chunk_steps"), 1)
        require(self, ("actor_procs",), 0)
        if self.ray_address and not self.actor_procs:
            raise ValueError(
                f"--ray-address: expected with --actor-procs N (N >= 1), got --actor-procs "
                f"{self.actor_procs}"
            )

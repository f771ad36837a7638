"""Recurrent replay training's config: the groups every replay agent composes."""

from __future__ import annotations

from dataclasses import dataclass

from agents.core.config.actors import ActorConfig
from agents.core.config.discount import QLearningConfig
from agents.core.config.interact import InteractConfig
from agents.core.config.network import NetworkConfig
from agents.core.config.optim import OptimConfig
from agents.core.config.replay import ReplayConfig
from agents.core.config.run import RunConfig
from agents.core.config.sequences import SequenceConfig


@dataclass
class ReplayAgentConfig(
    QLearningConfig,
    ReplayConfig,
    OptimConfig,
    SequenceConfig,
    NetworkConfig,
    ActorConfig,
    InteractConfig,
    RunConfig,
):
    """Recurrent replay training (actors + prioritized sequence replay + recurrent learner)."""

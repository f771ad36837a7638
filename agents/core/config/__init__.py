"""Config groups: each field is declared once, in the group it belongs to, with a one-line
docstring that becomes its ``demostudio train ALGO --help`` text.

An algorithm's config is a flat dataclass composed from groups by inheritance, so the CLI
stays flat (``--hidden``, ``--demos``, ...)::

    @dataclass
    class R2D2Config(ReplayAgentConfig): ...              # run + actors + network + ...

    @dataclass
    class BCConfig(RunConfig, NetworkConfig, SequenceConfig, OptimConfig, DemoConfig,
                   BCSettings): ...

A subclass may change a field's default by declaring it again without a docstring (the
group's docstring stays the help text). ``validate()`` runs the ``check`` of every group
in the config, so each group checks its own fields once.
"""

from __future__ import annotations

from agents.core.config.actor_procs import ActorProcsConfig
from agents.core.config.actors import ActorConfig
from agents.core.config.base import (
    ConfigGroup,
    config_from_dict,
    config_to_dict,
    require,
    require_unit,
)
from agents.core.config.demo_mix import DemoMixConfig
from agents.core.config.demo_replay import DemoReplayConfig
from agents.core.config.demos import DemoConfig
from agents.core.config.discount import DiscountConfig, QLearningConfig
from agents.core.config.interact import InteractConfig
from agents.core.config.margin import MarginConfig
from agents.core.config.network import NetworkConfig, NetworkWidths
from agents.core.config.optim import OptimConfig
from agents.core.config.replay import ReplayConfig
from agents.core.config.replay_agent import ReplayAgentConfig
from agents.core.config.run import RunConfig
from agents.core.config.sequences import SequenceConfig

__all__ = [
    "ActorConfig",
    "ActorProcsConfig",
    "ConfigGroup",
    "DemoConfig",
    "DemoMixConfig",
    "DemoReplayConfig",
    "DiscountConfig",
    "InteractConfig",
    "MarginConfig",
    "NetworkConfig",
    "NetworkWidths",
    "OptimConfig",
    "QLearningConfig",
    "ReplayAgentConfig",
    "ReplayConfig",
    "RunConfig",
    "SequenceConfig",
    "config_from_dict",
    "config_to_dict",
    "require",
    "require_unit",
]

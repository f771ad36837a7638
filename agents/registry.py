"""The one list of algorithms, read by ``demostudio train``, ``compare`` and checkpoint
restore: name -> (module, Agent class, one-line summary).

Entries are imported lazily so that listing the names does not import torch. A new
algorithm adds one line here (or calls :func:`register_algorithm`) naming its package and
its :class:`agents.core.agent.Agent` subclass; the run shell, the CLI flags (from the
agent's ``config_cls``) and restore follow.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, NamedTuple


class AlgorithmEntry(NamedTuple):
    agent_cls: type
    summary: str

    @property
    def config_cls(self) -> type:
        return self.agent_cls.config_cls

    @property
    def train(self) -> Callable[[Any], Any]:
        """``train(cfg)``: the run shell with this algorithm's agent."""
        run = importlib.import_module("agents.core.run")
        return lambda cfg: run.train(self.agent_cls(cfg))


_ENTRIES: dict[str, tuple[str, str, str]] = {
    "r2d2": ("agents.r2d2", "R2D2", "recurrent replay DQN, agent replay only"),
    "r2d3": ("agents.r2d3", "R2D3", "R2D2 plus a demo replay mixed into batches"),
    "dqfd": (
        "agents.dqfd",
        "DQfD",
        "pre-training on demos, large-margin loss, demos kept in prioritized replay",
    ),
    "bc": ("agents.bc", "BC", "behaviour cloning (cross-entropy, demo actions)"),
    "sqil": ("agents.sqil", "SQIL", "Q-learning with demo reward 1, agent 0"),
    "rnd-ppo": ("agents.rnd_ppo", "RNDPPO", "recurrent PPO with RND intrinsic rewards"),
    "ppo": ("agents.rnd_ppo", "PPO", "recurrent PPO (rnd-ppo with the intrinsic reward off)"),
    "reactor": ("agents.reactor", "Reactor", "Retrace actor-critic (beta-LOO), optional demo mix"),
}


def algorithm_names() -> list[str]:
    return sorted(_ENTRIES)


def algorithm_summaries() -> dict[str, str]:
    """name -> one-line summary (no import of the algorithms)."""
    return {name: _ENTRIES[name][2] for name in algorithm_names()}


def get_algorithm(name: str) -> AlgorithmEntry:
    if name not in _ENTRIES:
        raise KeyError(f"expected one of {algorithm_names()}, got {name!r}")
    module, cls_name, summary = _ENTRIES[name]
    return AlgorithmEntry(getattr(importlib.import_module(module), cls_name), summary)


def register_algorithm(name: str, module: str, agent_cls: str, summary: str) -> None:
    """Add an algorithm: its package (module path) and Agent class name."""
    _ENTRIES[name] = (module, agent_cls, summary)


__all__ = [
    "AlgorithmEntry",
    "algorithm_names",
    "algorithm_summaries",
    "get_algorithm",
    "register_algorithm",
]

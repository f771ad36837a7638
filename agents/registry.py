"""The one list of algorithms, read by ``demostudio train``, ``compare`` and checkpoint
restore: name -> (package, Agent class, config class, one-line summary).

Nothing here imports an algorithm until it is used, so listing the names does not import
torch, and neither does :attr:`AlgorithmEntry.config_cls`: ``demostudio train ALGO --help``
and a mistyped flag build their parser from the config alone. A config module imports no
torch (its package's ``__init__`` does, re-exporting the agent), so :func:`config_class`
imports it with the algorithm packages' ``__init__`` deferred to their first use (see
:func:`defer_package_init`).

A new algorithm adds one line here (or calls :func:`register_algorithm`) naming its package,
its :class:`agents.core.agent.Agent` subclass and its config class; the run shell, the CLI
flags and restore follow.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
from collections.abc import Callable
from typing import Any, NamedTuple


class AlgorithmEntry(NamedTuple):
    package: str
    """The package that holds the agent class."""
    agent_name: str
    config: str | None
    """``module:Class`` of the config, a module that imports no torch (None: the agent's
    ``config_cls``, which imports the agent)."""
    summary: str

    @property
    def agent_cls(self) -> type:
        return getattr(importlib.import_module(self.package), self.agent_name)

    @property
    def config_cls(self) -> type:
        """The agent's config class (the same object as ``agent_cls.config_cls``)."""
        if self.config is None:
            return self.agent_cls.config_cls
        return config_class(self.config)

    @property
    def train(self) -> Callable[[Any], Any]:
        """``train(cfg)``: the run shell with this algorithm's agent."""
        run = importlib.import_module("agents.core.run")
        return lambda cfg: run.train(self.agent_cls(cfg))


_ENTRIES: dict[str, AlgorithmEntry] = {}


def register_algorithm(
    name: str, module: str, agent_cls: str, summary: str, config: str | None = None
) -> None:
    """Add an algorithm: its package (module path), Agent class name and, so that its help
    and flag errors need no torch, its config as ``module:Class`` in a module that imports
    none."""
    _ENTRIES[name] = AlgorithmEntry(module, agent_cls, config, summary)


for _name, _package, _agent, _config, _summary in (
    ("r2d2", "agents.r2d2", "R2D2", "R2D2Config", "recurrent replay DQN, agent replay only"),
    ("r2d3", "agents.r2d3", "R2D3", "R2D3Config", "R2D2 plus a demo replay mixed into batches"),
    (
        "dqfd",
        "agents.dqfd",
        "DQfD",
        "DQfDConfig",
        "pre-training on demos, large-margin loss, demos kept in prioritized replay",
    ),
    ("bc", "agents.bc", "BC", "BCConfig", "behaviour cloning (cross-entropy, demo actions)"),
    ("sqil", "agents.sqil", "SQIL", "SQILConfig", "Q-learning with demo reward 1, agent 0"),
    (
        "rnd-ppo",
        "agents.rnd_ppo",
        "RNDPPO",
        "RNDPPOConfig",
        "recurrent PPO with RND intrinsic rewards",
    ),
    (
        "ppo",
        "agents.rnd_ppo",
        "PPO",
        "PPOConfig",
        "recurrent PPO (rnd-ppo with the intrinsic reward off)",
    ),
    (
        "reactor",
        "agents.reactor",
        "Reactor",
        "ReactorConfig",
        "Retrace actor-critic (beta-LOO), optional demo mix",
    ),
):
    register_algorithm(_name, _package, _agent, _summary, f"{_package}.config:{_config}")


def algorithm_names() -> list[str]:
    return sorted(_ENTRIES)


def algorithm_summaries() -> dict[str, str]:
    """name -> one-line summary (no import of the algorithms)."""
    return {name: _ENTRIES[name].summary for name in algorithm_names()}


def get_algorithm(name: str) -> AlgorithmEntry:
    """The entry of ``name`` (nothing imported yet); KeyError naming the algorithms."""
    if name not in _ENTRIES:
        raise KeyError(f"expected one of {algorithm_names()}, got {name!r}")
    return _ENTRIES[name]


def config_class(spec: str) -> type:
    """The class ``module:Class`` of a config module, imported with the ``__init__`` of every
    registered algorithm package deferred: a config module may import another algorithm's
    config (R2D3's imports R2D2's) without that package importing its agent."""
    module, _, name = spec.partition(":")
    for entry in _ENTRIES.values():
        defer_package_init(entry.package)
    return getattr(importlib.import_module(module), name)


def defer_package_init(name: str) -> None:
    """Put package ``name`` in ``sys.modules`` without running its ``__init__``, which runs
    on the first attribute the package lacks (``from agents.r2d3 import R2D3``). Importing a
    submodule (``agents.r2d3.config``) runs only that submodule. A package already imported,
    or not found, is left as it is."""
    if name in sys.modules:
        return
    parent, _, _ = name.rpartition(".")
    search = importlib.import_module(parent).__path__ if parent else None
    spec = importlib.machinery.PathFinder.find_spec(name, search)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return
    package = importlib.util.module_from_spec(spec)

    def run_init(attr: str) -> Any:
        del package.__getattr__  # the package's own attributes from here on
        try:
            spec.loader.exec_module(package)
        except BaseException:
            package.__getattr__ = run_init  # the next use tries again and fails the same way
            raise
        return getattr(package, attr)

    package.__getattr__ = run_init  # PEP 562: called only for attributes the module lacks
    sys.modules[name] = package
    if parent:
        setattr(sys.modules[parent], name.rpartition(".")[2], package)


__all__ = [
    "AlgorithmEntry",
    "algorithm_names",
    "algorithm_summaries",
    "config_class",
    "defer_package_init",
    "get_algorithm",
    "register_algorithm",
]

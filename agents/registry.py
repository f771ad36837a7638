"""The algorithms ``demostudio train ALGO`` knows: name -> (config class, train function).

Entries are imported lazily so that listing the names does not import torch."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, NamedTuple


class AlgorithmEntry(NamedTuple):
    config_cls: type
    train: Callable[[Any], Any]
    summary: str


_ENTRIES: dict[str, tuple[str, str, str, str]] = {
    "r2d2": ("agents.r2d2", "R2D2Config", "train_r2d2", "recurrent replay DQN, agent replay only"),
    "r2d3": (
        "agents.r2d3",
        "R2D3Config",
        "train_r2d3",
        "R2D2 plus a demo replay mixed into batches",
    ),
    "dqfd": (
        "agents.dqfd",
        "DQfDConfig",
        "train_dqfd",
        "pre-training on demos, large-margin loss, demos kept in prioritized replay",
    ),
    "bc": ("agents.bc", "BCConfig", "train_bc", "behaviour cloning (cross-entropy, demo actions)"),
    "sqil": ("agents.sqil", "SQILConfig", "train_sqil", "Q-learning with demo reward 1, agent 0"),
}


def algorithm_names() -> list[str]:
    return sorted(_ENTRIES)


def get_algorithm(name: str) -> AlgorithmEntry:
    if name not in _ENTRIES:
        raise KeyError(f"expected one of {algorithm_names()}, got {name!r}")
    module, cfg_name, fn_name, summary = _ENTRIES[name]
    mod = importlib.import_module(module)
    return AlgorithmEntry(getattr(mod, cfg_name), getattr(mod, fn_name), summary)


def register_algorithm(
    name: str, module: str, config_cls: str, train_fn: str, summary: str
) -> None:
    """Add an algorithm (module path, config class name, train function name)."""
    _ENTRIES[name] = (module, config_cls, train_fn, summary)


__all__ = ["AlgorithmEntry", "algorithm_names", "get_algorithm", "register_algorithm"]

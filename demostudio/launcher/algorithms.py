"""The algorithms the Train panel offers, with what the panel must know to build their
command lines: whether they take demos, which flag is their budget, whether they resume and
can be coached. Read from the registry and each algorithm's config dataclass (the CLI's flags
come from the same fields), so an algorithm added to the registry appears here too.

Reading the configs imports the algorithms and torch (seconds), so :class:`AlgorithmCatalog`
does it in a background thread: the launcher's window keeps drawing meanwhile."""

from __future__ import annotations

import dataclasses
import threading
from typing import Literal, NamedTuple

from demostudio.launcher.progress import Clock

WHEN_TO_PICK: dict[str, str] = {
    "r2d3": "you have demos of a hard-exploration game: they guide it from the first step",
    "dqfd": "a few good demos: it learns from them first (pre-training), then from play",
    "bc": "many consistent demos and little time: copies your actions, no play needed",
    "sqil": "demos but no useful reward: rewards the agent for doing what the demos do",
    "reactor": "an actor-critic with replay, demos optional: try it when Q-learning stalls",
    "r2d2": "no demos and a reward that comes often: learns from its own play alone",
    "ppo": "no demos and cheap env steps (classic control): plain on-policy learning",
    "rnd-ppo": "no demos and a sparse reward: a curiosity bonus drives exploration",
}
"""One line per algorithm on when to pick it (also the panel's order, best first)."""

Demos = Literal["required", "optional", "none"]


class AlgoInfo(NamedTuple):
    name: str
    summary: str
    """The registry's one line on what it is."""
    when: str
    """When to pick it (:data:`WHEN_TO_PICK`, else the summary)."""
    demos: Demos
    clock: Clock
    """What its budget counts: env steps, or learner updates (BC)."""
    budget_flag: str
    """``--total-env-steps`` or ``--max-updates``."""
    default_budget: int
    default_eval_every: int
    pretrain: tuple[tuple[str, int], ...]
    """(flag, default updates) of its pre-training phases (DQfD's, RND-PPO's from demos)."""
    resumable: bool
    coachable: bool
    """It has a demo replay the coach's corrections go into (``demostudio coach``)."""

    def usable(self, have_demos: bool) -> bool:
        return have_demos or self.demos != "required"


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def describe(name: str, summary: str, config_cls: type) -> AlgoInfo:
    """The facts of one algorithm from its config dataclass."""
    from agents.core.config import DemoReplayConfig

    fields = {f.name: f for f in dataclasses.fields(config_cls)}
    if "demos" not in fields:
        demos: Demos = "none"
    else:
        demos = "required" if getattr(config_cls, "demos_required", False) else "optional"
    budget = "total_env_steps" if "total_env_steps" in fields else "max_updates"
    pretrain = tuple(
        (_flag(k), int(f.default))
        for k, f in fields.items()
        if k.endswith("pretrain_updates") and isinstance(f.default, int)
    )
    return AlgoInfo(
        name=name,
        summary=summary,
        when=WHEN_TO_PICK.get(name, summary),
        demos=demos,
        clock="env_steps" if budget == "total_env_steps" else "updates",
        budget_flag=_flag(budget),
        default_budget=int(fields[budget].default),
        default_eval_every=int(fields["eval_every"].default),
        pretrain=pretrain,
        resumable="resume" in fields,
        coachable=issubclass(config_cls, DemoReplayConfig),
    )


def load_algorithms() -> list[AlgoInfo]:
    """Every registered algorithm, in :data:`WHEN_TO_PICK`'s order, then the others by name
    (imports the algorithms: seconds)."""
    from agents.registry import algorithm_names, get_algorithm

    order = list(WHEN_TO_PICK)
    names = sorted(algorithm_names(), key=lambda n: (order.index(n) if n in order else 99, n))
    out = []
    for name in names:
        entry = get_algorithm(name)
        out.append(describe(name, entry.summary, entry.config_cls))
    return out


class AlgorithmCatalog:
    """:func:`load_algorithms` in a background thread; ``algos`` is empty until ``ready``."""

    def __init__(self) -> None:
        self.algos: list[AlgoInfo] = []
        self.error: str = ""
        self.ready = threading.Event()
        self._thread = threading.Thread(target=self._load, name="algorithm-catalog", daemon=True)
        self._thread.start()

    def _load(self) -> None:
        try:
            self.algos = load_algorithms()
        except Exception as exc:  # an algorithm that fails to import: said in the panel
            self.error = f"could not read the algorithms: {type(exc).__name__}: {exc}"
        finally:
            self.ready.set()


__all__ = ["WHEN_TO_PICK", "AlgoInfo", "AlgorithmCatalog", "describe", "load_algorithms"]

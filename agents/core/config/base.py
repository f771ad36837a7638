"""The base of every config group (``validate``, ``warnings``, limits), the checks its groups
share and a config's saved form (``config_to_dict`` / ``config_from_dict``)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def require(cfg: object, names: tuple[str, ...], low: float, strict: bool = False) -> None:
    """ValueError naming the flag unless each field is ``>= low`` (``> low`` if strict)."""
    values = vars(cfg)  # the dataclass's own fields: a name it lacks is a KeyError
    for name in names:
        v = values[name]
        if v is None:
            continue
        if (v <= low) if strict else (v < low):
            raise ValueError(f"{_flag(name)}: expected {'>' if strict else '>='} {low:g}, got {v}")


def require_unit(cfg: object, names: tuple[str, ...]) -> None:
    values = vars(cfg)
    for name in names:
        v = values[name]
        if v is not None and not 0.0 <= v <= 1.0:
            raise ValueError(f"{_flag(name)}: expected in [0, 1], got {v}")


G = TypeVar("G", bound="ConfigGroup")


def _number(v: float) -> str:
    return str(v) if isinstance(v, int) else f"{v:g}"


@dataclass
class ConfigGroup:
    """Base of every group: ``validate`` runs each group's own ``check`` once."""

    limits: ClassVar[dict[str, float]] = {}
    """Upper bounds of this group's fields (sizes, rates, counts of updates or steps), checked
    by ``validate`` before any group's ``check``: a typo such as ``--hidden 40000`` is refused
    in one line instead of allocating gigabytes, ``--pretrain-updates 1000000000000`` instead
    of running for years. Each group declares its own fields' bounds once; an algorithm's
    config inherits them with the groups."""

    diverging: ClassVar[tuple[str, ...]] = ()
    """This group's fields that make the learner diverge when set too high (or too low, such
    as ``adam_eps``): when a loss becomes non-finite, those given a value other than their
    default are named as the likely cause. Declared and inherited like ``limits``."""

    learning_rate_field: ClassVar[str] = "learning_rate"
    """The field that sets the learner's learning rate: the flag a diverged run is told to
    lower when none of the ``diverging`` fields was changed."""

    def check(self) -> None:
        """Raise ValueError naming the flag for values of this group that cannot work."""

    def advice(self) -> list[str]:
        """Lines warning of values that work but waste the run (learning never starting);
        ``warnings()`` gathers every group's."""
        return []

    @classmethod
    def upper_bounds(cls) -> dict[str, float]:
        """Every group's ``limits`` for the fields ``cls`` has."""
        names = {f.name for f in dataclasses.fields(cls)}
        bounds: dict[str, float] = {}
        for klass in reversed(cls.__mro__):
            bounds.update(klass.__dict__.get("limits", {}))
        return {k: v for k, v in bounds.items() if k in names}

    @classmethod
    def divergence_fields(cls) -> frozenset[str]:
        """Every group's ``diverging`` fields that ``cls`` has."""
        names = {f.name for f in dataclasses.fields(cls)}
        found: set[str] = set()
        for klass in cls.__mro__:
            found.update(klass.__dict__.get("diverging", ()))
        return frozenset(found & names)

    def group(self, cls: type[G]) -> G:
        """This config's values of the group ``cls`` (one of its bases) alone, as a ``cls``:
        a part built from it sees its own settings and nothing else of the config."""
        if not isinstance(self, cls):
            raise TypeError(f"expected a group of {type(self).__name__}, got {cls.__name__}")
        values = vars(self)
        return cls(**{f.name: values[f.name] for f in dataclasses.fields(cls) if f.init})

    def divergence_hint(self) -> str:
        """What a diverged run is told to check: the ``diverging`` fields given a value other
        than their default (the likely cause), else the learning rate's flag."""
        values, diverging = vars(self), self.divergence_fields()
        changed = [
            f"{_flag(f.name)} {values[f.name]:g}"
            for f in dataclasses.fields(self)
            if f.name in diverging
            and f.default is not dataclasses.MISSING
            and values[f.name] != f.default
        ]
        if changed:
            return f"check {', '.join(changed)}"
        rate = values.get(self.learning_rate_field, math.nan)
        return f"lower {_flag(self.learning_rate_field)} (now {float(rate):g})"

    def validate(self) -> None:
        """Every number finite (a saved config may hold NaN) and within its group's limits,
        then each group's check."""
        values = vars(self)  # the fields only: properties are not settings
        for f in dataclasses.fields(self):
            value = values[f.name]
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"{_flag(f.name)}: expected a finite number, got {value}")
        for name, high in self.upper_bounds().items():
            value = values[name]
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value > high:
                high_text, value_text = _number(high), _number(value)
                raise ValueError(f"{_flag(name)}: expected <= {high_text}, got {value_text}")
        for fn in self._group_methods("check"):
            fn(self)

    def warnings(self) -> list[str]:
        """Every group's ``advice``: one line each, for the command to print."""
        return [line for fn in self._group_methods("advice") for line in fn(self)]

    def _group_methods(self, name: str) -> list[Any]:
        seen: list[Any] = []
        for klass in reversed(type(self).__mro__):
            fn = klass.__dict__.get(name)
            if fn is not None and fn not in seen:
                seen.append(fn)
        return seen


def config_to_dict(cfg: Any) -> dict[str, Any]:
    """JSON-able dict (Paths as strings, tuples as lists)."""
    out: dict[str, Any] = {}
    values = vars(cfg)
    for f in dataclasses.fields(cfg):
        v = values[f.name]
        if isinstance(v, Path):
            v = str(v)
        elif isinstance(v, tuple):
            v = [str(x) if isinstance(x, Path) else x for x in v]
        out[f.name] = v
    return out


C = TypeVar("C")


def config_from_dict(cls: type[C], values: dict[str, Any]) -> C:
    """A config of ``cls`` from a saved dict (``config_to_dict``'s output): unknown keys are
    ignored and missing ones keep their defaults (a checkpoint of an older version)."""
    fields = {f.name: f for f in dataclasses.fields(cls)}
    kwargs: dict[str, Any] = {}
    for name, v in values.items():
        if name not in fields:
            continue
        if isinstance(v, list):
            v = tuple(Path(x) if name == "demos" else x for x in v)
        elif name == "run_dir" and v is not None:
            v = Path(v)
        kwargs[name] = v
    return cls(**kwargs)

"""What a key map is: bindings (a set of held keys -> an action), aliases and the action when
no bound key is held, and which binding the held keys select. The key map file format and
where key maps come from: :mod:`demostudio.play.keymap`."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Binding:
    keys: frozenset[str]
    """The keys that must all be held."""
    action: Any
    """The action (int, or a list for Box spaces)."""
    label: str = ""
    """What the action does, for the help overlay."""


@dataclass(frozen=True)
class KeyMap:
    """Keys to actions for one env (see the module docstring)."""

    bindings: tuple[Binding, ...]
    noop: Any
    aliases: Mapping[str, str] = field(default_factory=dict)
    source: str = ""
    """Where it came from: a file path, ``bundled:<file>`` or ``<env id> get_keys_to_action()``."""
    name: str = ""

    @property
    def keys(self) -> frozenset[str]:
        """Every key this map reacts to, aliases included."""
        bound = set().union(*(b.keys for b in self.bindings)) if self.bindings else set()
        return frozenset(bound | set(self.aliases))

    def canonical(self, held: Sequence[str]) -> list[str]:
        """Held keys this map knows, aliases resolved, in press order (latest press last)."""
        out: list[str] = []
        for k in held:
            k = self.aliases.get(k, k)
            if k in out:
                out.remove(k)
            out.append(k)
        known = self.keys
        return [k for k in out if k in known]

    def binding_for(self, held: Sequence[str]) -> Binding | None:
        keys = self.canonical(held)
        if not keys:
            return None
        order = {k: i for i, k in enumerate(keys)}
        best, best_score = None, (-1, -1)
        for b in self.bindings:
            if b.keys <= order.keys():
                score = (len(b.keys), max(order[k] for k in b.keys))
                if score > best_score:
                    best, best_score = b, score
        return best

    def action_for(self, held: Sequence[str]) -> Any:
        """The action for the held keys (press order); ``noop`` when none is bound."""
        b = self.binding_for(held)
        return self.noop if b is None else b.action

    def to_json(self) -> dict[str, Any]:
        """``{"key+key": action}`` (aliases expanded, ``""`` = no key), as stored in episodes."""
        alts: dict[str, list[str]] = {}
        for alias, target in self.aliases.items():
            alts.setdefault(target, []).append(alias)
        out: dict[str, Any] = {"": self.noop}
        for b in self.bindings:
            choices = [[k, *alts.get(k, [])] for k in sorted(b.keys)]
            for combo in itertools.product(*choices):
                out.setdefault("+".join(combo), b.action)
        return out

    def to_document(self) -> dict[str, Any]:
        """This key map in the key map file format (a template for ``--keymap`` files)."""
        return {
            "name": self.name,
            "noop": self.noop,
            "bindings": [
                {"keys": sorted(b.keys, key=_key_order), "action": b.action, "label": b.label}
                for b in self.bindings
            ],
            "aliases": dict(self.aliases),
        }

    def help_rows(self) -> list[tuple[str, str]]:
        """(keys, what they do) for the help overlay, one row per binding."""
        alts: dict[str, list[str]] = {}
        for alias, target in self.aliases.items():
            alts.setdefault(target, []).append(alias)
        rows = []
        for b in sorted(self.bindings, key=lambda b: (len(b.keys), str(b.action))):
            keys = " + ".join(
                "/".join(x.upper() for x in [k, *alts.get(k, [])])
                for k in sorted(b.keys, key=_key_order)
            )
            rows.append((keys, b.label or f"action {b.action}"))
        return rows


def _key_order(key: str) -> tuple[int, str]:
    """Help shows direction keys first (up, down, left, right), then the rest, fire last."""
    rank = {"up": 0, "w": 0, "down": 1, "s": 1, "left": 2, "a": 2, "right": 3, "d": 3}
    return (rank.get(key, 5 if key == "space" else 4), key)


def describe_keys(keys: Iterable[str]) -> str:
    return "+".join(k.upper() for k in keys) or "-"

"""Key maps: which held keys give which action.

A key map is a list of bindings (a set of pygame key names -> an action), the action taken when
no bound key is held (``noop``) and aliases (a second key that means the same as a bound one,
e.g. the arrows for ALE's W/A/S/D). Key maps come from, in order of preference:

1. a user file given with ``--keymap`` (same JSON format as the bundled ones),
2. a bundled file marked ``"replaces_env_map": true`` (Pong: up/down instead of ALE's
   RIGHT/LEFT keys),
3. the env's own ``get_keys_to_action()`` (ALE, MountainCar), translated to pygame 2 key names
   (Gymnasium's MountainCar returns pygame 1 arrow codes 273-276 that pygame 2 never sends),
4. a bundled file in ``assets/keymaps/`` whose ``envs`` patterns match the env id.

Discrete actions may be given by number or by the env's action name (``"UPFIRE"``).

Key map file format (JSON)::

    {
      "name": "CartPole",
      "envs": ["CartPole-v*"],            # fnmatch patterns (bundled files only)
      "action_space": "Discrete",         # optional: only for envs with this kind of space
      "noop": 0,                          # the action when no bound key is held
      "bindings": [
        {"keys": ["left"], "action": 0, "label": "push left"},
        {"keys": ["up", "left"], "action": [1.0, -1.0], "label": "main + left engine"}
      ],
      "aliases": {"a": "left"}            # optional: alias key -> bound key
    }

Key names are pygame's (``pygame.key.name``): ``left``, ``a``, ``space``, ``return``,
``page up``, ``left shift``... Matching picks the binding with the most keys whose keys are all
held; between equally long ones the most recently pressed key wins, so holding LEFT then
pressing RIGHT goes right.
"""

from __future__ import annotations

import fnmatch
import itertools
import json
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pygame

from demostudio.assets import KEYMAPS
from demostudio.episode import EpisodeError
from demostudio.episode.jsonfile import read_json_file

MAX_KEYMAP_BYTES = 1024 * 1024
"""Largest key map file read (a full ALE map takes a few KB)."""

# pygame 1 key codes for the arrows (Gymnasium's MountainCar still uses them).
PYGAME1_KEYS = {273: "up", 274: "down", 275: "right", 276: "left"}
# Help labels for envs whose own key map has no action meanings.
ACTION_LABELS = {
    "MountainCar-v*": ("accelerate left", "don't accelerate", "accelerate right"),
}
# Arrow keys offered as aliases for W/A/S/D maps (ALE's own maps use W/A/S/D).
ARROW_ALIASES = {"up": "w", "left": "a", "down": "s", "right": "d"}


class KeyMapError(ValueError):
    """A key map entry that cannot be used; names the file (or source) and the entry."""

    def __init__(self, source: str, entry: str, message: str):
        self.source = source
        self.entry = entry
        super().__init__(f"{source}: {entry}: {message}")


def key_name(key: int | str, source: str = "key map", entry: str = "key") -> str:
    """The canonical pygame key name of a key code or a (case-insensitive) key name.

    Works without pygame.init() (SDL key names do not depend on the display), so the CLI can
    check key maps headless; pygame's warning about that is silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            code = int(key)
            if code in PYGAME1_KEYS:
                return PYGAME1_KEYS[code]
            try:
                name = pygame.key.name(code)
            except OverflowError:  # beyond a C int: no key has it
                name = ""
            if not name:
                raise KeyMapError(source, entry, f"expected a pygame key code, got {code}")
            return name
        if not isinstance(key, str) or not key:
            raise KeyMapError(source, entry, f"expected a key name, got {key!r}")
        if key == " ":
            return "space"
        try:
            return pygame.key.name(pygame.key.key_code(key.lower()))
        except ValueError:
            raise KeyMapError(
                source,
                entry,
                f"expected a pygame key name such as 'left', 'a', 'space', 'return', "
                f"'page up', got {key!r}",
            ) from None


def check_action(
    action: Any,
    space: gym.Space,
    source: str,
    entry: str,
    meanings: Sequence[str] | None = None,
) -> Any:
    """``action`` as a plain JSON-able value that ``space`` contains, or KeyMapError.

    For Discrete spaces an action may also be named by the env's action meaning (ALE's
    ``"UPLEFT"``), resolved to its index."""
    if isinstance(space, gym.spaces.Discrete) and isinstance(action, str):
        names = list(meanings or [])
        if action.upper() not in names:
            shown = ", ".join(names) if names else "none: use action numbers"
            raise KeyMapError(
                source,
                entry,
                f"expected an action number or one of the env's action names ({shown}), "
                f"got {action!r}",
            )
        action = names.index(action.upper())
    if isinstance(space, gym.spaces.Discrete):
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)):
            raise KeyMapError(source, entry, f"expected an integer action, got {action!r}")
        if not space.contains(np.int64(action)):
            raise KeyMapError(
                source,
                entry,
                f"expected an action in {space} ({space.start}..{space.start + space.n - 1}), "
                f"got {int(action)}",
            )
        return int(action)
    if isinstance(space, gym.spaces.Box):
        try:
            arr = np.asarray(action, dtype=space.dtype).reshape(space.shape)
        except (ValueError, TypeError):
            raise KeyMapError(
                source, entry, f"expected an action of shape {space.shape}, got {action!r}"
            ) from None
        if not space.contains(arr):
            raise KeyMapError(source, entry, f"expected an action inside {space}, got {action!r}")
        return arr.tolist()
    if isinstance(space, gym.spaces.MultiDiscrete | gym.spaces.MultiBinary):
        arr = np.asarray(action)
        if not space.contains(arr.astype(space.dtype)) or arr.shape != space.shape:
            raise KeyMapError(source, entry, f"expected an action in {space}, got {action!r}")
        return arr.tolist()
    raise KeyMapError(
        source,
        entry,
        f"expected a Discrete, Box, MultiDiscrete or MultiBinary action space, got {space}",
    )


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


# ---- loading ---------------------------------------------------------------------------------


def _key_order(key: str) -> tuple[int, str]:
    """Help shows direction keys first (up, down, left, right), then the rest, fire last."""
    rank = {"up": 0, "w": 0, "down": 1, "s": 1, "left": 2, "a": 2, "right": 3, "d": 3}
    return (rank.get(key, 5 if key == "space" else 4), key)


def _space_kind(space: gym.Space) -> str:
    return type(space).__name__


def parse_keymap(
    data: Any, space: gym.Space, source: str, meanings: Sequence[str] | None = None
) -> KeyMap:
    """Validate a key map document against ``space`` (and the env's action names, for
    actions given by name); KeyMapError names the bad entry."""
    if not isinstance(data, dict):
        raise KeyMapError(source, "top level", f"expected a JSON object, got {type(data).__name__}")
    bindings_doc = data.get("bindings")
    if not isinstance(bindings_doc, list) or not bindings_doc:
        raise KeyMapError(
            source, "bindings", f"expected a non-empty list of bindings, got {bindings_doc!r}"
        )
    bindings = []
    for i, entry in enumerate(bindings_doc):
        where = f"bindings[{i}]"
        if not isinstance(entry, dict) or "keys" not in entry or "action" not in entry:
            raise KeyMapError(
                source, where, f'expected {{"keys": [...], "action": ...}}, got {entry!r}'
            )
        keys = entry["keys"]
        if isinstance(keys, str):
            keys = [keys]
        if not isinstance(keys, list) or not keys:
            raise KeyMapError(
                source, f"{where}.keys", f"expected a non-empty list of key names, got {keys!r}"
            )
        names = frozenset(key_name(k, source, f"{where}.keys") for k in keys)
        action = check_action(entry["action"], space, source, f"{where}.action", meanings)
        label = entry.get("label", "")
        if not isinstance(label, str):
            raise KeyMapError(source, f"{where}.label", f"expected text, got {label!r}")
        bindings.append(Binding(names, action, label))
    if "noop" not in data:
        raise KeyMapError(source, "noop", "expected the action taken when no key is held")
    noop = check_action(data["noop"], space, source, "noop", meanings)
    aliases_doc = data.get("aliases", {})
    if not isinstance(aliases_doc, dict):
        raise KeyMapError(
            source, "aliases", f"expected an object alias -> key, got {aliases_doc!r}"
        )
    bound = set().union(*(b.keys for b in bindings))
    aliases = {}
    for alias, target in aliases_doc.items():
        a = key_name(alias, source, f"aliases[{alias!r}]")
        t = key_name(target, source, f"aliases[{alias!r}]")
        if t not in bound:
            raise KeyMapError(
                source, f"aliases[{alias!r}]", f"expected a key used in bindings, got {target!r}"
            )
        aliases[a] = t
    return KeyMap(tuple(bindings), noop, aliases, source, str(data.get("name", "")))


def load_keymap(
    path: str | Path, space: gym.Space, meanings: Sequence[str] | None = None
) -> KeyMap:
    """A key map file, validated against the env's action space (and action names)."""
    path = Path(path)
    if not os.path.lexists(path):
        msg = "expected a key map JSON file, it does not exist"
        raise KeyMapError(str(path), "file", msg)
    try:  # a FIFO, a folder, a huge or deeply nested file: one line, never a hang
        data = read_json_file(path, "a key map JSON file", MAX_KEYMAP_BYTES)
    except EpisodeError as exc:
        raise KeyMapError(str(path), "file", exc.reason) from None
    return parse_keymap(data, space, str(path), meanings)


def env_keymap(env: gym.Env) -> KeyMap | None:
    """The env's own ``get_keys_to_action()`` in pygame 2 key names, or None if it has none."""
    base = env.unwrapped
    getter = getattr(base, "get_keys_to_action", None)
    if not callable(getter):
        return None
    try:
        mapping = getter()
    except (AttributeError, NotImplementedError):
        return None
    spec_id = env.spec.id if env.spec else type(base).__name__
    source = f"{spec_id} get_keys_to_action()"
    names = _meanings(env)
    for pattern, labels in ACTION_LABELS.items():
        if not names and fnmatch.fnmatchcase(spec_id, pattern):
            names = list(labels)
    noop = None
    bindings = []
    for combo, action in mapping.items():
        combo = combo if isinstance(combo, tuple) else (combo,)
        entry = f"keys {combo!r}"
        act = check_action(action, env.action_space, source, entry)
        keys = frozenset(key_name(k, source, entry) for k in combo)
        if not keys:
            noop = act
            continue
        label = names[act] if isinstance(act, int) and act < len(names) else ""
        bindings.append(Binding(keys, act, label))
    if noop is None:
        noop = names.index("NOOP") if "NOOP" in names else getattr(env.action_space, "start", 0)
        noop = check_action(noop, env.action_space, source, "noop")
    bound = set().union(*(b.keys for b in bindings)) if bindings else set()
    aliases = {}
    if {"w", "a", "s", "d"} & bound:
        aliases = {a: k for a, k in ARROW_ALIASES.items() if k in bound and a not in bound}
    return KeyMap(tuple(bindings), noop, aliases, source, spec_id)


def _meanings(env: gym.Env) -> list[str]:
    getter = getattr(env.unwrapped, "get_action_meanings", None)
    if callable(getter):
        return [str(m) for m in getter()]
    actions = getattr(env.unwrapped, "actions", None)
    if actions is not None and hasattr(actions, "__members__"):
        return [name.upper() for name in actions.__members__]
    return []


def bundled_keymap_files() -> list[Path]:
    return sorted(KEYMAPS.glob("*.json"))


def bundled_keymap(
    env_id: str,
    space: gym.Space,
    meanings: Sequence[str] | None = None,
    replacing_env_map: bool = False,
) -> KeyMap | None:
    """The bundled key map whose ``envs`` patterns match ``env_id`` (and whose
    ``action_space`` kind matches), or None. ``replacing_env_map``: only files marked
    ``"replaces_env_map": true`` (they win over the env's own map, e.g. Pong's up/down)."""
    for path in bundled_keymap_files():
        data = json.loads(path.read_text(encoding="utf-8"))
        patterns = data.get("envs", [])
        if not any(fnmatch.fnmatchcase(env_id, p) for p in patterns):
            continue
        kind = data.get("action_space")
        if kind is not None and kind != _space_kind(space):
            continue
        if replacing_env_map and not data.get("replaces_env_map", False):
            continue
        return parse_keymap(data, space, f"bundled:{path.name}", meanings)
    return None


def resolve_keymap(env: gym.Env, env_id: str, user_file: str | Path | None = None) -> KeyMap:
    """The key map to play ``env`` with: the user's file, a bundled one that replaces the env's
    own, the env's own, or a bundled one."""
    meanings = _meanings(env)
    if user_file is not None:
        return load_keymap(user_file, env.action_space, meanings)
    km = bundled_keymap(env_id, env.action_space, meanings, replacing_env_map=True)
    if km is None:
        km = env_keymap(env)
    if km is None:
        km = bundled_keymap(env_id, env.action_space, meanings)
    if km is None:
        raise KeyMapError(
            env_id,
            "key map",
            "expected a key map: the env has no get_keys_to_action() and no bundled key map "
            "matches it; give one with --keymap FILE (format: see demostudio/play/keymap.py)",
        )
    return km


def describe_keys(keys: Iterable[str]) -> str:
    return "+".join(k.upper() for k in keys) or "-"


__all__ = [
    "Binding",
    "KeyMap",
    "KeyMapError",
    "bundled_keymap",
    "bundled_keymap_files",
    "check_action",
    "describe_keys",
    "env_keymap",
    "key_name",
    "load_keymap",
    "parse_keymap",
    "resolve_keymap",
]

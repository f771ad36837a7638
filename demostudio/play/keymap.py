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
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym

from demostudio.assets import KEYMAPS
from demostudio.episode import EpisodeError
from demostudio.episode.jsonfile import read_json_file
from demostudio.play.bindings import Binding, KeyMap, describe_keys
from demostudio.play.keymap_check import KeyMapError, check_action, key_name

MAX_KEYMAP_BYTES = 1024 * 1024
"""Largest key map file read (a full ALE map takes a few KB)."""

# Help labels for envs whose own key map has no action meanings.
ACTION_LABELS = {
    "MountainCar-v*": ("accelerate left", "don't accelerate", "accelerate right"),
}
# Arrow keys offered as aliases for W/A/S/D maps (ALE's own maps use W/A/S/D).
ARROW_ALIASES = {"up": "w", "left": "a", "down": "s", "right": "d"}


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

"""Checking the entries of a key map: key names (pygame 2 names, from a name or a key code,
pygame 1's arrow codes too) and actions against the env's action space, each failure one
:class:`KeyMapError` naming the source and the entry."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
import pygame

# pygame 1 key codes for the arrows (Gymnasium's MountainCar still uses them).
PYGAME1_KEYS = {273: "up", 274: "down", 275: "right", 276: "left"}


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

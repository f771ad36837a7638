"""Play and record: the keyboard (or any controller) drives a Gymnasium env in a pygame window
through :class:`~demostudio.episode.RecordEpisodes`. Key maps, the fixed-rate game loop with its
pure event handling (:func:`process_event`), the HUD, countdown and the window.

The names below are re-exported lazily (PEP 562), so importing :mod:`demostudio.play.config`
for the CLI's flags does not import pygame."""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "PlayConfig": "config",
    "KeyboardController": "keyboard",
    "KeyMap": "keymap",
    "KeyMapError": "keymap",
    "load_keymap": "keymap",
    "resolve_keymap": "keymap",
    "build_controller_session": "run",
    "build_session": "run",
    "run_controller_window": "run",
    "run_play": "run",
    "PlayResult": "summary",
    "PlaySession": "session",
    "SessionOptions": "options",
    "Request": "state",
    "SessionState": "state",
    "Speed": "speed",
    "step_rates": "speed",
    "TakeoverController": "takeover",
    "process_event": "state",
    "realtime_fps": "timing",
    "turn_based_default": "timing",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'demostudio.play' has no attribute {name!r}")
    return getattr(importlib.import_module(f"demostudio.play.{module}"), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = sorted(_EXPORTS)

"""The keyboard as a controller: the action for the keys the player holds (or, turn-based, for
each key press), through a :class:`~demostudio.play.keymap.KeyMap`."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from demostudio.play.keymap import KeyMap
from demostudio.play.state import SessionState


class KeyboardController:
    """Reads the window's :class:`SessionState`; follows the Controller protocol.

    ``last_keys`` are the keys behind the last action (stored with the step). In turn-based
    mode :meth:`ready` is true only while a key press waits to be played."""

    name = "keyboard"

    def __init__(self, keymap: KeyMap, state: SessionState, turn_based: bool = False):
        self.keymap = keymap
        self.state = state
        self.turn_based = turn_based
        self.last_keys: tuple[str, ...] = ()

    def reset(self, env: gym.Env, observation: Any, info: dict) -> None:
        self.state.turns.clear()
        self.last_keys = ()

    def ready(self) -> bool:
        return not self.turn_based or bool(self.state.turns)

    def act(self, env: gym.Env, observation: Any) -> Any:
        if self.turn_based:
            keys = self.state.turns.pop(0) if self.state.turns else ()
        else:
            keys = tuple(self.state.held)
        self.last_keys = keys
        return self.keymap.action_for(keys)

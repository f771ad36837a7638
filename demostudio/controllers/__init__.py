"""Controllers choose actions. The keyboard is one (in :mod:`demostudio.play`); scripted
policies (:mod:`.scripted`, the grid planners in :mod:`.grid`) and random play are others,
and :mod:`.human` plays a scripted one like a person at the keyboard. All of them record
through the same wrapper."""

from __future__ import annotations

from typing import Any, Protocol

import gymnasium as gym

from .scripted import SCRIPTED, RandomController, scripted_controller


class Controller(Protocol):
    """Something that picks an action each step."""

    name: str
    """Recorded as the episode's ``controller`` attribute, e.g. ``policy:scripted``."""

    def reset(self, env: gym.Env, observation: Any, info: dict) -> None:
        """Called after every reset."""

    def act(self, env: gym.Env, observation: Any) -> Any:
        """The action for this step."""


__all__ = ["SCRIPTED", "Controller", "RandomController", "scripted_controller"]

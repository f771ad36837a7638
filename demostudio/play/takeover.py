"""Taking over from an agent: T in the watch window hands control to the person and back.

:class:`TakeoverController` drives with the agent until :attr:`SessionState.person` is set,
then with the keyboard (the game's own key map). The agent keeps observing throughout: its
``act`` runs every step, and while the person drives it is told the action actually played
through ``taken(action)`` (the take-over hook), so its recurrent state stays current and
handing control back is seamless. Controllers without ``taken`` are simply not told."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from demostudio.controllers import Controller
from demostudio.play.keyboard import KeyboardController
from demostudio.play.state import SessionState


def person_actor(player: str) -> str:
    """The actor name of a person (episode files' ``actor_names``)."""
    return f"person:{player}"


class TakeoverController:
    """The agent, or the person while ``state.person`` is set; follows the Controller
    protocol. ``name`` is the agent's (the file's controller); :attr:`actor` names who
    drives now."""

    def __init__(
        self, agent: Controller, keyboard: KeyboardController, state: SessionState, player: str
    ):
        self.agent = agent
        self.keyboard = keyboard
        self.state = state
        self.player = player
        self.name = agent.name
        self.last_keys: tuple[str, ...] = ()
        self.agent_action: Any = None
        """What the agent chose last step (also while the person drove)."""
        state.can_take_over = True

    @property
    def person(self) -> bool:
        return self.state.person

    @property
    def actor(self) -> str:
        """``person:<player>`` while the person drives, else the agent's name."""
        return person_actor(self.player) if self.person else self.agent.name

    def reset(self, env: gym.Env, observation: Any, info: dict) -> None:
        self.agent.reset(env, observation, info)
        self.keyboard.reset(env, observation, info)
        self.last_keys = ()
        self.agent_action = None

    def act(self, env: gym.Env, observation: Any) -> Any:
        self.agent_action = self.agent.act(env, observation)
        if not self.person:
            self.last_keys = ()
            return self.agent_action
        action = self.keyboard.act(env, observation)
        self.last_keys = self.keyboard.last_keys
        taken = getattr(self.agent, "taken", None)
        if callable(taken):
            taken(action)
        return action


__all__ = ["TakeoverController", "person_actor"]

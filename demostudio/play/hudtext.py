"""What the play window's HUD bar says in words (its :class:`~demostudio.play.hud.HudInfo`
fields): the lives an env reports, an action with its meaning, who is in control."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np


def lives(info: Any) -> int | None:
    """The ``lives`` an env's step info reports (Atari), else None."""
    n = info.get("lives") if isinstance(info, dict) else None
    if isinstance(n, (int, np.integer)) and not isinstance(n, bool):
        return int(n)
    return None


def action_text(action: Any, env: gym.Env) -> str:
    """``action`` as shown ("-": none yet), with its meaning when ``env`` names its discrete
    actions (``get_action_meanings``, Atari)."""
    if action is None:
        return "-"
    action = np.asarray(action)
    text = str(action.item()) if action.size == 1 else np.array2string(action, precision=2)
    meanings = getattr(env.unwrapped, "get_action_meanings", None)
    if callable(meanings) and action.size == 1 and action.dtype.kind in "iu":
        try:
            text += f" {meanings()[int(action.item())]}"
        except (IndexError, TypeError):
            pass
    return text


def control_text(can_take_over: bool, person: bool, controller: str) -> str:
    """Who is in control ("" when only ever the keyboard or the agent)."""
    if not can_take_over:
        return ""
    if person:
        return "YOU drive - T: hand back"
    return f"AGENT ({controller}) drives - T: take over"


__all__ = ["action_text", "control_text", "lives"]

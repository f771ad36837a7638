"""``demostudio play`` options: one flat dataclass, one flag per field."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from demostudio.ui.settings import recordings_root


def default_player() -> str:
    """The person at the keyboard when no name is given: the login name."""
    try:
        return os.getlogin()
    except OSError:
        return os.environ.get("USER", "")


@dataclass
class PlayConfig:
    """Play a Gymnasium game with the keyboard; every episode is saved."""

    env: str = field(metadata={"positional": True})
    """Gymnasium env id, e.g. MountainCar-v0, ALE/Breakout-v5, MiniGrid-DoorKey-8x8-v0."""

    # ---- recording
    out: Path = field(default_factory=recordings_root)
    """Root folder; episodes go to OUT/<env id with / as ->/. Your recordings folder unless
    given (`demostudio launch --out DIR` changes it)."""
    player: str = ""
    """Stored as the episodes' player (default: your login name)."""
    record: bool = True
    """Save episodes (--no-record: practice without saving)."""
    episodes: int | None = None
    """Stop after this many finished episodes (none: play until you quit)."""
    keep_on_quit: bool = False
    """Closing the window saves the episode in progress (truncated) without asking (default:
    it asks, as Esc does)."""
    seed: int | None = None
    """First reset seed (then +1 per episode); none draws a fresh 64-bit seed per episode."""

    # ---- game
    env_kwargs: str = ""
    """Extra gymnasium.make keyword arguments as JSON, e.g. '{"continuous": true}'."""
    max_episode_steps: int | None = None
    """Override the env's time limit."""
    keymap: Path | None = None
    """A key map JSON file (default: the env's own, else a bundled one)."""

    # ---- timing and window
    fps: float | None = None
    """Steps per second (default: the env's real-time rate, e.g. 15 for Atari v5); stored."""
    turn_based: bool | None = None
    """Step only on a key press (default: on for MiniGrid/BabyAI, off otherwise)."""
    countdown: float = 3.0
    """Seconds of 3-2-1 countdown before each episode (0: none)."""
    zoom: float | None = None
    """Window zoom (default: the largest whole zoom that fits about 1000x720)."""
    screenshots: Path = Path("screenshots")
    """Folder for F12 screenshots."""

    def player_name(self) -> str:
        return self.player or default_player()

    def make_kwargs(self) -> dict[str, Any]:
        """``env_kwargs`` parsed; ValueError worded "expected X, got Y"."""
        if not self.env_kwargs.strip():
            return {}
        try:
            value = json.loads(self.env_kwargs)
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"--env-kwargs: expected a JSON object, got {self.env_kwargs!r} ({exc})"
            ) from None
        if not isinstance(value, dict):
            raise ValueError(f"--env-kwargs: expected a JSON object, got {self.env_kwargs!r}")
        return value

"""How a play session runs: :class:`SessionOptions`, set by ``demostudio play``
(:func:`~demostudio.play.run.build_session`) and by ``run_controller_window`` (watching an
agent), read by :class:`~demostudio.play.session.PlaySession`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class SessionOptions:
    """How a session runs (set by ``demostudio play`` and ``run_controller_window``)."""

    env_id: str
    """Shown in the HUD and used to name screenshots."""
    fps: float | None
    """Steps per second (None: as fast as possible). Ignored when turn-based."""
    turn_based: bool = False
    """Step only when the controller is ready (the keyboard: on each game key press)."""
    countdown: float = 3.0
    """Seconds of 3-2-1 before each episode (0: none)."""
    episodes: int | None = None
    """Stop after this many finished episodes (None: until the player quits)."""
    keep_on_quit: bool = False
    """Closing the window saves the episode in progress without asking (default: it asks, as
    Esc does, whenever a person's steps would be lost)."""
    screenshots: Path = Path("screenshots")
    """Folder for F12 screenshots."""
    seed: int | None = None
    """First reset seed, then +1 per episode; None draws a fresh seed for each episode."""
    start_countdown: float = 0.0
    """Seconds of countdown before the first episode when longer than ``countdown`` (watching
    an agent: time to take over before it starts)."""
    hold_at_end: bool = False
    """After the last of ``episodes``, keep the window on its last frame with a summary until
    a key (Esc, Enter, Space, Q) or the window is closed (watching an agent)."""


__all__ = ["SessionOptions"]

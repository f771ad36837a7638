"""What a play session played: one :class:`EpisodeLog` per episode, the :class:`PlayResult` that
:meth:`~demostudio.play.session.PlaySession.run` returns, and the summary lines the window
shows when it holds on the last frame (``hold_at_end``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple


class EpisodeLog(NamedTuple):
    """One episode of a session, for the summary printed at the end."""

    number: int
    steps: int
    episode_return: float
    how: str
    """"ended", "timed out", "ended early", "saved at quit", "not saved" (quit or restarted
    while recording) or "stopped" (quit, nothing recorded)."""
    path: Path | None
    """The saved file (None: not recorded, discarded, or still being written)."""
    person_steps: int
    """Steps a person drove (keyboard play: all of them; watching: the take-overs)."""
    controller: str

    def driver(self) -> str:
        """Who drove: "you", "the agent (NAME)" or both with the person's share."""
        if self.controller == "keyboard":
            return "you"
        agent = f"the agent ({self.controller})"
        if self.person_steps == 0:
            return agent
        if self.person_steps >= self.steps:
            return "you (took over)"
        return f"{agent} and you ({self.person_steps} of {self.steps} steps)"


class PlayResult(NamedTuple):
    saved: list[Path]
    """Episode files saved during the session, in order."""
    episodes: int
    """Episodes finished (ended by the env or by End), saved or not."""
    discarded: int
    """Episodes thrown away (Backspace, or in progress at quit)."""
    log: tuple[EpisodeLog, ...] = ()
    """Every episode played (finished, saved at quit, or thrown away), in order."""


def summary_lines(
    log: Sequence[EpisodeLog], saved: int, in_folder: bool, most: int = 6
) -> list[str]:
    """The hold screen's lines: the last ``most`` episodes of ``log``, how many were
    ``saved`` (said only when they went ``in_folder``, which the terminal lists), then how to
    leave."""
    lines = [
        f"{e.number}: return {e.episode_return:.4g}, {e.steps} steps, {e.driver()}"
        + ("" if e.how in ("ended", "timed out") else f" ({e.how})")
        for e in log[-most:]
    ]
    if len(log) > most:
        lines.insert(0, f"... {len(log) - most} earlier episode(s)")
    if in_folder and saved:
        lines.append(f"{saved} saved (the terminal lists the files)")
    lines.append("Esc / Enter / Space or closing the window: exit")
    return lines


__all__ = ["EpisodeLog", "PlayResult", "summary_lines"]

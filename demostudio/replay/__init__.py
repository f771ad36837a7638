"""The episode viewer: scrub episodes like a video, tag, verify and export them.

``run_viewer(paths)`` opens the window (the ``demostudio replay`` command and the launcher
call it); :class:`Viewer` is the window itself and :class:`Playback` its pure clock."""

from __future__ import annotations

from pathlib import Path

from .controls import BINDINGS, Command, apply_playback, command_for
from .playback import SPEEDS, Playback


def run_viewer(paths: list[Path], *, export_dir: Path = Path("exports")) -> None:
    """Open the viewer on episode files and/or folders and return when it is closed."""
    import pygame

    from .viewer import Viewer

    display_was_up = pygame.display.get_init()
    viewer = Viewer([Path(p) for p in paths], export_dir=export_dir)
    try:
        viewer.run()
    finally:
        viewer.close()
        if not display_was_up:
            pygame.quit()


__all__ = [
    "BINDINGS",
    "SPEEDS",
    "Command",
    "Playback",
    "apply_playback",
    "command_for",
    "run_viewer",
]

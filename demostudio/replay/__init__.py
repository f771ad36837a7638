"""The episode viewer: scrub episodes like a video, tag, verify and export them.

``run_viewer(paths)`` opens the window (the ``demostudio replay`` command and the launcher
call it); ``viewer.Viewer`` is the window itself (it draws and carries out requests),
``state`` its input state with the pure ``process_event``, :class:`Playback` the clock and
``controls`` the key bindings. Importing this package does not import pygame."""

from __future__ import annotations

from pathlib import Path

from .playback import SPEEDS, Playback


def run_viewer(paths: list[Path], *, export_dir: Path = Path("exports")) -> None:
    """Open the viewer on episode files and/or folders and return when it is closed."""
    import pygame

    from .viewer import Viewer

    display_was_up = pygame.display.get_init()
    repeat = pygame.key.get_repeat() if display_was_up else (0, 0)
    viewer = Viewer([Path(p) for p in paths], export_dir=export_dir)
    try:
        viewer.run()
    finally:
        viewer.close()
        # Give a caller's window (the launcher) its keyboard settings back.
        pygame.key.set_repeat(*repeat)
        pygame.key.start_text_input()
        if not display_was_up:
            # Only the display: ui.theme caches fonts, which pygame.quit() would invalidate.
            pygame.display.quit()


__all__ = ["SPEEDS", "Playback", "run_viewer"]

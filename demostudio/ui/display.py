"""The display check every window command runs first, and the SDL environment the CLI sets up
before anything initialises SDL.

Without a display, pygame-ce falls back to SDL's ``offscreen`` driver: the window opens
nowhere and the command seems to hang. :func:`require_display` turns that into one clear
error. An explicit ``SDL_VIDEODRIVER`` (``dummy`` runs the windows headless, as the tests
do) is the user's choice and is always honoured."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

HEADLESS_DRIVERS = ("offscreen", "dummy")
"""SDL video drivers that show nothing."""


class NoDisplayError(RuntimeError):
    """No usable display for a window (printed as one line, non-zero exit)."""


def require_display() -> None:
    """Raise :class:`NoDisplayError` unless a window can really be shown.

    Initialises pygame's display (a fraction of a second) and checks which SDL driver it got;
    ``SDL_VIDEODRIVER`` set by the user skips the check."""
    if os.environ.get("SDL_VIDEODRIVER", "").strip():
        return
    import pygame

    try:
        pygame.display.init()
    except pygame.error as exc:
        raise NoDisplayError(_message(f"SDL could not open one: {exc}")) from None
    driver = pygame.display.get_driver()
    if driver in HEADLESS_DRIVERS:
        pygame.display.quit()
        names = [f"{n}={os.environ[n]}" for n in ("DISPLAY", "WAYLAND_DISPLAY") if n in os.environ]
        found = ", ".join(names) or "DISPLAY and WAYLAND_DISPLAY unset"
        raise NoDisplayError(_message(f"SDL found only its {driver!r} driver ({found})"))


def _message(why: str) -> str:
    return (
        f"expected a display to open the window, got none: {why}. Run it in a desktop "
        "session (or with ssh -X); SDL_VIDEODRIVER=dummy runs the window invisibly"
    )


def _usable_runtime_dir(path: str) -> bool:
    """The XDG spec's runtime dir: an absolute path to a directory we own, mode 0700."""
    if not path or not os.path.isabs(path):
        return False
    try:
        st = os.stat(path)
    except OSError:
        return False
    return (
        stat.S_ISDIR(st.st_mode)
        and st.st_uid == os.getuid()
        and stat.S_IMODE(st.st_mode) & 0o077 == 0
        and os.access(path, os.W_OK | os.X_OK)
    )


def private_runtime_dir() -> Path:
    """``$TMPDIR/demostudio-runtime-<uid>`` (mode 0700, ours), or a fresh one if that name
    is taken by something we cannot use."""
    path = Path(tempfile.gettempdir()) / f"demostudio-runtime-{os.getuid()}"
    try:
        path.mkdir(mode=0o700, exist_ok=True)
    except OSError:
        pass
    if _usable_runtime_dir(str(path)):
        return path
    return Path(tempfile.mkdtemp(prefix="demostudio-runtime-"))


def prepare_sdl_environment() -> None:
    """Call before SDL starts (the CLI does, first thing): a valid ``XDG_RUNTIME_DIR`` (else
    SDL prints "error: XDG_RUNTIME_DIR is invalid" even in successful headless runs), no audio
    device (DemoStudio makes no sound; probing ALSA prints errors on machines without one)
    and no pygame banner on stdout. Values the user set are kept, except an invalid runtime
    dir."""
    if hasattr(os, "getuid") and not _usable_runtime_dir(os.environ.get("XDG_RUNTIME_DIR", "")):
        os.environ["XDG_RUNTIME_DIR"] = str(private_runtime_dir())
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")


__all__ = ["HEADLESS_DRIVERS", "NoDisplayError", "prepare_sdl_environment", "require_display"]

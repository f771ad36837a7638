"""The display check every window command runs first, and the SDL environment the CLI sets up
before anything initialises SDL.

Without a display, pygame-ce falls back to SDL's ``offscreen`` driver: the window opens
nowhere and the command seems to hang. :func:`require_display` turns that into one clear
error that names what runs without a window instead (never an invisible window: play or a
replay under SDL's dummy driver would wait for keys nobody can press). An explicit
``SDL_VIDEODRIVER`` (``dummy``, as the tests use) is the user's choice and is always
honoured."""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path

HEADLESS_DRIVERS = ("offscreen", "dummy")
"""SDL video drivers that show nothing."""


class NoDisplayError(RuntimeError):
    """No usable display for a window (printed as one line, non-zero exit)."""


HEADLESS_COMMANDS = (
    "record, watch --headless --record DIR and the commands without a window (train, "
    "evaluate, ls, info, export, ...) run there"
)


def require_display(instead: str = "") -> None:
    """Raise :class:`NoDisplayError` unless a window can really be shown; ``instead`` names
    what does the command's job without a window (e.g. watch: ``--headless --record DIR``).

    Initialises pygame's display (a fraction of a second) and checks which SDL driver it got;
    ``SDL_VIDEODRIVER`` set by the user skips the check; set to a driver that shows nothing
    while a person sits at the terminal, it is said in one line (the window would wait
    for keys nobody can aim at it)."""
    chosen = os.environ.get("SDL_VIDEODRIVER", "").strip()
    if chosen:
        if chosen.lower() in HEADLESS_DRIVERS and sys.stdin is not None and sys.stdin.isatty():
            print(
                f"demostudio: warning: SDL_VIDEODRIVER={chosen} shows no window: this one is "
                f"invisible and waits for keys (Ctrl-C ends it); {no_window_hint(instead)}",
                file=sys.stderr,
            )
        return
    import pygame

    try:
        pygame.display.init()
    except pygame.error as exc:
        raise NoDisplayError(_message(f"SDL could not open one: {exc}", instead)) from None
    driver = pygame.display.get_driver()
    if driver in HEADLESS_DRIVERS:
        pygame.display.quit()
        names = [f"{n}={os.environ[n]}" for n in ("DISPLAY", "WAYLAND_DISPLAY") if n in os.environ]
        found = ", ".join(names) or "DISPLAY and WAYLAND_DISPLAY unset"
        raise NoDisplayError(_message(f"SDL found only its {driver!r} driver ({found})", instead))


def shows_windows() -> bool:
    """A person can see the windows: pygame's display runs on a real video driver (not
    ``dummy`` or ``offscreen``, as in the tests). Initialises the display if needed."""
    import pygame

    if not pygame.display.get_init():
        try:
            pygame.display.init()
        except pygame.error:
            return False
    return pygame.display.get_driver() not in HEADLESS_DRIVERS


DESKTOP_SHARE = (0.96, 0.88)
"""The share of the desktop's width and height a window may take when it opens or zooms:
the rest is room for the title bar, a panel or dock, and the window's frame."""


def desktop_room() -> tuple[int, int] | None:
    """The largest window size (width, height) that fits the (first) desktop with room for a
    title bar and a panel (:data:`DESKTOP_SHARE`); None when SDL cannot tell."""
    import pygame

    try:
        sizes = pygame.display.get_desktop_sizes()
    except pygame.error:
        return None
    if not sizes or min(sizes[0]) <= 0:
        return None
    w, h = sizes[0]
    return int(w * DESKTOP_SHARE[0]), int(h * DESKTOP_SHARE[1])


def fit_to_desktop(size: tuple[int, int], minimum: tuple[int, int] = (0, 0)) -> tuple[int, int]:
    """``size`` shrunk to :func:`desktop_room` (never below ``minimum``)."""
    room = desktop_room()
    if room is None:
        return int(size[0]), int(size[1])
    w = max(minimum[0], min(int(size[0]), room[0]))
    h = max(minimum[1], min(int(size[1]), room[1]))
    return w, h


def keep_on_screen() -> None:
    """Move the window back onto the (first) desktop when it sticks out of it, e.g. after a
    window re-used by another view (the launcher's, then the replay viewer's) or a zoom grew
    it at its old position: centred, so its title bar stays reachable. A window on another
    monitor is left alone."""
    import pygame

    try:
        x, y = pygame.display.get_window_position()
        w, h = pygame.display.get_window_size()
        sizes = pygame.display.get_desktop_sizes()
    except (pygame.error, AttributeError):
        return
    if not sizes:
        return
    dw, dh = sizes[0]
    if not (0 <= x < dw and 0 <= y < dh):
        return
    if x + w <= dw and y + h <= dh:
        return
    try:
        pygame.display.set_window_position((max(0, (dw - w) // 2), max(0, (dh - h) // 2)))
    except pygame.error:
        pass


def no_window_hint(instead: str = "") -> str:
    """What to do without a display: a desktop session, or what runs without a window there
    (``instead``, else :data:`HEADLESS_COMMANDS`)."""
    instead = instead or HEADLESS_COMMANDS
    return f"run it in a desktop session (or with ssh -X); without a display, {instead}"


def _message(why: str, instead: str = "") -> str:
    return f"expected a display to open the window, got none: {why}; {no_window_hint(instead)}"


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


__all__ = [
    "HEADLESS_DRIVERS",
    "NoDisplayError",
    "desktop_room",
    "fit_to_desktop",
    "keep_on_screen",
    "no_window_hint",
    "prepare_sdl_environment",
    "require_display",
    "shows_windows",
]

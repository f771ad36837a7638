"""The play window's input state and its pure update, :func:`process_event`.

``process_event(state, event, game_keys, turn_based)`` changes nothing but ``state``: it tracks
the game keys held (in press order), queues key presses for turn-based play, toggles pause,
help and who drives (take-over), and queues :class:`Request` s that the session carries out
(restart, end now, quit, screenshot, zoom, one frame step, speed). Tests feed it synthetic
events; the window feeds it pygame's.

Controls (a game key map may take H, P, T, ``.``, ``[`` and ``]``; the other controls are
always controls; no bundled key map binds any of them):

=================  ===========================================================
F1 / H             help overlay (the key map and these controls)
P / Pause          pause / resume (nothing is recorded while paused)
``.``              frame advance: paused, one step with the game keys held (recorded like
                   any step); while running it pauses first
``[`` / ``]``      slower / faster (the rate is shown in the HUD and kept in the file)
T                  take over from the agent / hand control back (watching an agent)
Backspace          discard this episode and restart (nothing saved)
End                end this episode now and save it (marked truncated)
Esc / close (X)    quit: asks whether to save the episode in progress (Enter/S save, D
                   discards, Esc or any other key goes back to the game; closing the window
                   again saves and quits)
F12                screenshot of the window
+ / -              zoom the window (any resize keeps the game's aspect)
=================  ===========================================================
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

import pygame


class Request(Enum):
    RESTART = "discard the episode and restart"
    END_EPISODE = "end the episode now and save it"
    QUIT = "quit (window closed): ask, or keep as configured"
    QUIT_KEEP = "quit, saving the episode in progress"
    QUIT_DISCARD = "quit, discarding the episode in progress"
    SCREENSHOT = "save a screenshot"
    ZOOM_IN = "zoom in"
    ZOOM_OUT = "zoom out"
    STEP_ONCE = "step the game once (frame advance while paused)"
    SLOWER = "play slower"
    FASTER = "play faster"


CONTROLS: tuple[tuple[str, str], ...] = (
    ("F1 / H", "show / hide this help"),
    ("P / Pause", "pause / resume (nothing recorded while paused)"),
    (".", "paused: step one frame with the keys held (recorded)"),
    ("[ / ]", "slower / faster (rate in the HUD, kept in the file)"),
    ("Backspace", "discard this episode and restart"),
    ("End", "end this episode now and save it (truncated)"),
    ("Esc / close", "quit (asks whether to save the episode in progress)"),
    ("F12", "screenshot"),
    ("+ / -", "zoom the window"),
)
HELP_KEYS = frozenset({"f1", "h"})
PAUSE_KEYS = frozenset({"p", "break", "pause"})
ZOOM_IN_KEYS = frozenset({"=", "+", "[+]"})
ZOOM_OUT_KEYS = frozenset({"-", "[-]"})
STEP_KEYS = frozenset({"."})
SLOWER_KEYS = frozenset({"["})
FASTER_KEYS = frozenset({"]"})
TAKEOVER_KEYS = frozenset({"t"})
TAKEOVER_CONTROL = ("T", "take over from the agent / hand control back")
ALWAYS_CONTROLS = frozenset({"f1", "escape", "backspace", "end", "f12"})
"""Keys that stay controls even when a key map binds them."""
CONFIRM_KEEP_KEYS = frozenset({"return", "s", "y", "[enter]"})
CONFIRM_DISCARD_KEYS = frozenset({"d"})
"""Discarding takes this explicit key: Esc (twice, a "get me out" reflex) goes back to the game."""


@dataclass
class SessionState:
    """What the player's input has asked for so far."""

    held: list[str] = field(default_factory=list)
    """Game keys held now, in press order (latest last)."""
    turns: list[tuple[str, ...]] = field(default_factory=list)
    """Turn-based play: the held keys at each game key press not yet played."""
    paused: bool = False
    had_focus: bool = False
    """The window has held the input focus (a window never focused, e.g. under a bare X
    server, or mid-way through being created, does not pause on a focus loss)."""
    help: bool = False
    confirm_quit: bool = False
    """The quit prompt is showing (Enter/S saves, D discards, closing the window again saves,
    Esc or any other key goes back to the game)."""
    requests: list[Request] = field(default_factory=list)
    resize: tuple[int, int] | None = None
    """A new window size asked for by the window manager, not yet applied."""
    can_take_over: bool = False
    """An agent drives and T hands control to the person (``demostudio watch``)."""
    person: bool = False
    """The person drives (took over from the agent with T); the game's key map applies."""

    @property
    def frozen(self) -> bool:
        """The game does not step (paused, help or quit prompt showing)."""
        return self.paused or self.help or self.confirm_quit

    def take_requests(self) -> list[Request]:
        out, self.requests = self.requests, []
        return out


def key_of(event: pygame.event.Event) -> str:
    return pygame.key.name(event.key)


def _control(state: SessionState, name: str, game_keys: frozenset[str]) -> bool:
    """Handle a control key press; False when ``name`` is not a control here."""
    if name == "f1" or (name in HELP_KEYS and name not in game_keys):
        state.help = not state.help
    elif name in PAUSE_KEYS and name not in game_keys:
        state.paused = not state.paused
    elif name == "escape":
        if state.help:
            state.help = False
        else:
            state.confirm_quit = True
    elif name == "backspace":
        state.requests.append(Request.RESTART)
    elif name == "end":
        state.requests.append(Request.END_EPISODE)
    elif name == "f12":
        state.requests.append(Request.SCREENSHOT)
    elif name in STEP_KEYS and name not in game_keys:
        if state.paused:
            if not (state.help or state.confirm_quit):
                state.requests.append(Request.STEP_ONCE)
        else:
            state.paused = True  # the first press stops the game; each next one steps it
    elif name in SLOWER_KEYS and name not in game_keys:
        state.requests.append(Request.SLOWER)
    elif name in FASTER_KEYS and name not in game_keys:
        state.requests.append(Request.FASTER)
    elif name in TAKEOVER_KEYS and name not in game_keys and state.can_take_over:
        state.person = not state.person
    elif name in ZOOM_IN_KEYS and name not in game_keys:
        state.requests.append(Request.ZOOM_IN)
    elif name in ZOOM_OUT_KEYS and name not in game_keys:
        state.requests.append(Request.ZOOM_OUT)
    else:
        return False
    return True


def process_event(
    state: SessionState,
    event: pygame.event.Event,
    game_keys: frozenset[str] = frozenset(),
    turn_based: bool = False,
    pause_on_focus_loss: bool = False,
) -> SessionState:
    """Update ``state`` for one pygame event and return it (nothing else is touched).

    ``game_keys`` are the key names the key map binds; ``turn_based`` queues each game key
    press in ``state.turns``; ``pause_on_focus_loss`` pauses when the window loses focus
    (keyboard play: the player is elsewhere)."""
    if event.type == pygame.QUIT:
        if state.confirm_quit:  # closed again while asking: keep the episode, never lose it
            state.confirm_quit = False
            state.requests.append(Request.QUIT_KEEP)
        else:
            state.requests.append(Request.QUIT)
    elif event.type == pygame.KEYDOWN:
        name = key_of(event)
        if state.confirm_quit:
            state.confirm_quit = False
            if name in CONFIRM_KEEP_KEYS:
                state.requests.append(Request.QUIT_KEEP)
            elif name in CONFIRM_DISCARD_KEYS:
                state.requests.append(Request.QUIT_DISCARD)
            return state
        if name in game_keys and name not in ALWAYS_CONTROLS:
            if name in state.held:
                state.held.remove(name)
            state.held.append(name)
            if turn_based and not state.frozen:
                state.turns.append(tuple(state.held))
            return state
        _control(state, name, game_keys)
    elif event.type == pygame.KEYUP:
        name = key_of(event)
        if name in state.held:
            state.held.remove(name)
    elif event.type == pygame.WINDOWFOCUSGAINED:
        state.had_focus = True
    elif event.type == pygame.WINDOWFOCUSLOST:
        # Keys released while the window is not focused never send KEYUP.
        state.held.clear()
        if pause_on_focus_loss and state.had_focus:
            state.paused = True
    elif event.type == pygame.VIDEORESIZE:
        state.resize = (int(event.w), int(event.h))
    return state


__all__ = [
    "CONTROLS",
    "TAKEOVER_CONTROL",
    "Request",
    "SessionState",
    "key_of",
    "process_event",
]

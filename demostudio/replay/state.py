"""The viewer's input state and its pure update, :func:`process_event`.

``process_event(state, event, geometry)`` changes nothing but ``state``: playback commands
move its :class:`~demostudio.replay.playback.Playback`, toggles flip its flags, mouse
events seek and hover, the modal prompt and confirmation edit themselves, and everything
that touches files, jobs or the window is queued as a :class:`Request` for the window to
carry out (open another episode, tag, delete, verify, export, trim, relayout, quit). Tests
feed it synthetic events; the window feeds it pygame's.

``geometry`` answers where a point is (timeline, episode list) without drawing anything:
the window passes itself, tests a stand-in."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum, auto
from typing import Any, NamedTuple, Protocol

import pygame

from .controls import Command, apply_playback, command_for
from .playback import Playback


class Do(Enum):
    """What a :class:`Request` asks the window to do (``value`` in brackets)."""

    QUIT = auto()
    SELECT = auto()
    """Open the episode at list index [int]."""
    MOVE = auto()
    """Open the episode [int] rows away (-1: previous, +1: next)."""
    SCROLL_LIST = auto()
    """Scroll the episode list by [int] rows."""
    RELAYOUT = auto()
    """The window size or the list's visibility changed."""
    RESCAN = auto()
    TAG = auto()
    """Toggle tag [(tag, the tag it excludes)]."""
    EDIT_TAGS = auto()
    """Open the tags prompt."""
    EDIT_NOTES = auto()
    """Open the notes prompt."""
    SAVE_TAGS = auto()
    """Save tags [comma-separated text]."""
    SAVE_NOTES = auto()
    """Save notes [text]."""
    ASK_DELETE = auto()
    """Ask whether to delete the episode."""
    DELETE = auto()
    """Delete it (confirmed)."""
    VERIFY = auto()
    JUMP_DIVERGENCE = auto()
    EXPORT = auto()
    """Export the marked range ["mp4" | "gif"]."""
    SAVE_PNG = auto()
    TRIM = auto()
    """Write the marked range as a new episode [cut the idle ends: bool]."""


class Request(NamedTuple):
    do: Do
    value: Any = None


@dataclass
class Prompt:
    """A one-line text prompt: type, Backspace, Enter queues ``Request(on_accept, text)``,
    Escape cancels."""

    title: str
    text: str
    on_accept: Do


@dataclass
class Confirm:
    """A yes/no question: Y or Enter queues ``on_yes``; N or Escape cancels."""

    question: str
    detail: str
    on_yes: Request


class Geometry(Protocol):
    """Where things are in the window (the window implements it)."""

    def on_timeline(self, pos: tuple[int, int]) -> bool: ...

    def frame_at(self, x: int) -> int:
        """The frame under pixel column ``x`` of the timeline (clamped)."""
        ...

    def on_list(self, pos: tuple[int, int]) -> bool: ...

    def list_row(self, pos: tuple[int, int]) -> int | None:
        """The episode index of the list row under ``pos``, or None."""
        ...


@dataclass
class ViewerState:
    """What the viewer's input has asked for so far."""

    playback: Playback | None = None
    """The clock of the open episode (None when none is open)."""
    show_overlay: bool = True
    show_list: bool = True
    show_help: bool = False
    dialog: Prompt | Confirm | None = None
    """The modal prompt or question showing (it receives every key)."""
    running: bool = True
    dragging: bool = False
    """The left button went down on the timeline and is held: motion seeks."""
    resume_after_drag: bool = False
    hover_x: int | None = None
    """Mouse x over the timeline (its frame is labelled), None elsewhere."""
    pointer: tuple[int, int] | None = None
    """The last known mouse position (the wheel scrolls what is under it)."""
    requests: list[Request] = field(default_factory=list)

    def take_requests(self) -> list[Request]:
        out, self.requests = self.requests, []
        return out


_REQUESTS: dict[Command, Request] = {
    Command.QUIT: Request(Do.QUIT),
    Command.PREV_EPISODE: Request(Do.MOVE, -1),
    Command.NEXT_EPISODE: Request(Do.MOVE, 1),
    Command.RESCAN: Request(Do.RESCAN),
    Command.TAG_GOOD: Request(Do.TAG, ("good", "bad")),
    Command.TAG_BAD: Request(Do.TAG, ("bad", "good")),
    Command.EDIT_TAGS: Request(Do.EDIT_TAGS),
    Command.EDIT_NOTES: Request(Do.EDIT_NOTES),
    Command.DELETE: Request(Do.ASK_DELETE),
    Command.VERIFY: Request(Do.VERIFY),
    Command.JUMP_DIVERGENCE: Request(Do.JUMP_DIVERGENCE),
    Command.EXPORT_MP4: Request(Do.EXPORT, "mp4"),
    Command.EXPORT_GIF: Request(Do.EXPORT, "gif"),
    Command.EXPORT_PNG: Request(Do.SAVE_PNG),
    Command.TRIM: Request(Do.TRIM, False),
    Command.TRIM_IDLE: Request(Do.TRIM, True),
}


def apply_command(state: ViewerState, command: Command) -> ViewerState:
    """Carry out a key command on ``state`` (playback and toggles) or queue its request."""
    if state.playback is not None and apply_playback(command, state.playback):
        return state
    if command is Command.TOGGLE_OVERLAY:
        state.show_overlay = not state.show_overlay
    elif command is Command.TOGGLE_LIST:
        state.show_list = not state.show_list
        state.requests.append(Request(Do.RELAYOUT))
    elif command is Command.TOGGLE_HELP:
        state.show_help = not state.show_help
    elif command in _REQUESTS:
        state.requests.append(_REQUESTS[command])
    return state


def _dialog_event(state: ViewerState, event: pygame.event.Event) -> None:
    dialog = state.dialog
    if isinstance(dialog, Prompt):
        if event.type == pygame.TEXTINPUT:
            dialog.text += event.text
        elif event.type == pygame.KEYDOWN:
            if event.key in (pygame.K_RETURN, pygame.K_KP_ENTER):
                state.dialog = None
                state.requests.append(Request(dialog.on_accept, dialog.text))
            elif event.key == pygame.K_ESCAPE:
                state.dialog = None
            elif event.key == pygame.K_BACKSPACE:
                dialog.text = dialog.text[:-1]
    elif isinstance(dialog, Confirm) and event.type == pygame.KEYDOWN:
        if event.key in (pygame.K_y, pygame.K_RETURN, pygame.K_KP_ENTER):
            state.dialog = None
            state.requests.append(dialog.on_yes)
        elif event.key in (pygame.K_n, pygame.K_ESCAPE):
            state.dialog = None


def _seek(state: ViewerState, geometry: Geometry, x: int) -> None:
    if state.playback is not None:
        state.playback.seek(geometry.frame_at(x))


def _mouse_down(state: ViewerState, geometry: Geometry, pos: tuple[int, int]) -> None:
    pb = state.playback
    if pb is not None and geometry.on_timeline(pos):
        state.dragging = True
        state.resume_after_drag = pb.playing
        pb.playing = False
        _seek(state, geometry, pos[0])
    elif state.show_list:
        row = geometry.list_row(pos)
        if row is not None:
            state.requests.append(Request(Do.SELECT, row))


def process_event(state: ViewerState, event: pygame.event.Event, geometry: Geometry) -> ViewerState:
    """Update ``state`` for one pygame event and return it (nothing else is touched)."""
    if event.type == pygame.QUIT:
        state.running = False
        state.requests.append(Request(Do.QUIT))
    elif event.type in (pygame.VIDEORESIZE, pygame.WINDOWSIZECHANGED):
        state.requests.append(Request(Do.RELAYOUT))
    elif state.dialog is not None:
        _dialog_event(state, event)
    elif event.type == pygame.KEYDOWN:
        command = command_for(event.key, getattr(event, "mod", 0))
        if command is not None:
            apply_command(state, command)
    elif event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
        state.pointer = tuple(event.pos)
        _mouse_down(state, geometry, event.pos)
    elif event.type == pygame.MOUSEMOTION:
        state.pointer = tuple(event.pos)
        state.hover_x = event.pos[0] if geometry.on_timeline(event.pos) else None
        if state.dragging:
            _seek(state, geometry, event.pos[0])
    elif event.type == pygame.MOUSEBUTTONUP and event.button == 1 and state.dragging:
        state.dragging = False
        if state.playback is not None and state.resume_after_drag:
            state.playback.playing = True
    elif event.type == pygame.MOUSEWHEEL:
        if state.show_list and state.pointer is not None and geometry.on_list(state.pointer):
            state.requests.append(Request(Do.SCROLL_LIST, -event.y))
        elif state.playback is not None:
            state.playback.step(-event.y)
    return state


__all__ = [
    "Confirm",
    "Do",
    "Geometry",
    "Prompt",
    "Request",
    "ViewerState",
    "apply_command",
    "process_event",
]

"""The overlays a play session draws over the game, with their words: the countdown before an
episode, the pause banner, the quit question, the summary while the window holds after the last
episode, and the keys help. Each takes a surface, a rect and plain data; the shapes are
:mod:`demostudio.play.hud`'s."""

from __future__ import annotations

from collections.abc import Sequence

import pygame

from demostudio.play import hud
from demostudio.play.keymap import KeyMap
from demostudio.play.state import CONTROLS, TAKEOVER_CONTROL
from demostudio.ui import theme


def draw_countdown(
    surface: pygame.Surface,
    rect: pygame.Rect,
    seconds_left: float,
    episode: int,
    can_take_over: bool,
) -> None:
    """The 3-2-1 before ``episode``; watching an agent, with how to take over from it."""
    hint = "T: take over from the agent" if can_take_over else ""
    hud.draw_countdown(surface, rect, seconds_left, episode, hint)


def draw_paused(surface: pygame.Surface, rect: pygame.Rect) -> None:
    """The pause banner: how to resume and to step by hand."""
    hud.draw_banner(
        surface,
        rect,
        "PAUSED",
        [
            "P to resume",
            ". steps one frame with the keys held",
            "nothing but those steps is recorded while paused",
        ],
    )


def draw_quit_question(
    surface: pygame.Surface, rect: pygame.Rect, steps: int, person_steps: int
) -> None:
    """Esc (or the window closed) with a person's steps at stake: save, discard or go back.
    ``steps`` is the episode's length so far, ``person_steps`` the part a person drove."""
    yours = "" if person_steps >= steps else f", {person_steps} yours"
    hud.draw_banner(
        surface,
        rect,
        "Quit?",
        [
            f"Enter / S: save this episode ({steps} steps{yours}) and quit",
            "D: discard it and quit",
            "Esc or any other key: back to the game",
            "closing the window again: save it and quit",
        ],
    )


def draw_done(surface: pygame.Surface, rect: pygame.Rect, lines: Sequence[str]) -> None:
    """The session's summary (:func:`~demostudio.play.summary.summary_lines`) while the window
    holds on the last frame."""
    hud.draw_banner(surface, rect, "Done", lines, theme.ACCENT)


def help_notes(
    keymap: KeyMap | None, controller: str, can_take_over: bool, turn_based: bool
) -> list[str]:
    """The help overlay's lines under the game keys: who drives, what no key does, the key
    map's source."""
    if keymap is None:
        return [f"controller: {controller}"]
    if can_take_over:
        return [
            f"agent: {controller}; these keys drive once you take over (T)",
            f"key map: {keymap.source}",
        ]
    if turn_based:
        first = "turn-based: one step per key press (hold a key to repeat it)"
    else:
        noop = keymap.noop
        label = next((b.label for b in keymap.bindings if b.action == noop), "")
        first = f"no key held: action {noop}" + (f" ({label})" if label else "")
    return [first, f"key map: {keymap.source}"]


def draw_keys_help(
    surface: pygame.Surface,
    rect: pygame.Rect,
    keymap: KeyMap | None,
    env_id: str,
    controller: str,
    *,
    can_take_over: bool,
    turn_based: bool,
) -> None:
    """The help overlay (F1): the game's keys, the :func:`help_notes`, the controls (with T
    when control can change hands)."""
    rows = keymap.help_rows() if keymap is not None else []
    title = f"Keys: {keymap.name or env_id}" if keymap else "Keys"
    controls = (*CONTROLS, TAKEOVER_CONTROL) if can_take_over else CONTROLS
    notes = help_notes(keymap, controller, can_take_over, turn_based)
    hud.draw_help(surface, rect, title, rows, controls, notes)


__all__ = [
    "draw_countdown",
    "draw_done",
    "draw_keys_help",
    "draw_paused",
    "draw_quit_question",
    "help_notes",
]

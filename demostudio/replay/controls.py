"""Keyboard bindings of the viewer and the pure playback part of handling them."""

from __future__ import annotations

from enum import Enum, auto
from typing import NamedTuple

import pygame

from .playback import Playback


class Command(Enum):
    PLAY_PAUSE = auto()
    STEP_BACK = auto()
    STEP_FORWARD = auto()
    JUMP_BACK_10 = auto()
    JUMP_FORWARD_10 = auto()
    JUMP_BACK_100 = auto()
    JUMP_FORWARD_100 = auto()
    HOME = auto()
    END = auto()
    FASTER = auto()
    SLOWER = auto()
    REVERSE = auto()
    MARK_IN = auto()
    MARK_OUT = auto()
    CLEAR_MARKS = auto()
    TOGGLE_LOOP = auto()
    RESCAN = auto()
    PREV_EPISODE = auto()
    NEXT_EPISODE = auto()
    TOGGLE_OVERLAY = auto()
    TOGGLE_LIST = auto()
    TOGGLE_HELP = auto()
    TAG_GOOD = auto()
    TAG_BAD = auto()
    EDIT_TAGS = auto()
    EDIT_NOTES = auto()
    DELETE = auto()
    VERIFY = auto()
    JUMP_DIVERGENCE = auto()
    EXPORT_MP4 = auto()
    EXPORT_GIF = auto()
    EXPORT_PNG = auto()
    TRIM = auto()
    TRIM_IDLE = auto()
    QUIT = auto()


class Binding(NamedTuple):
    key: int
    modifier: str
    """"" (none), "shift" or "ctrl"."""
    command: Command
    label: str
    """How the help screen names the key ("" for an alias listed elsewhere)."""


BINDINGS: tuple[Binding, ...] = (
    Binding(pygame.K_SPACE, "", Command.PLAY_PAUSE, "Space"),
    Binding(pygame.K_LEFT, "", Command.STEP_BACK, "Left"),
    Binding(pygame.K_RIGHT, "", Command.STEP_FORWARD, "Right"),
    Binding(pygame.K_LEFT, "shift", Command.JUMP_BACK_10, "Shift+Left"),
    Binding(pygame.K_RIGHT, "shift", Command.JUMP_FORWARD_10, "Shift+Right"),
    Binding(pygame.K_LEFT, "ctrl", Command.JUMP_BACK_100, "Ctrl+Left"),
    Binding(pygame.K_RIGHT, "ctrl", Command.JUMP_FORWARD_100, "Ctrl+Right"),
    Binding(pygame.K_HOME, "", Command.HOME, "Home"),
    Binding(pygame.K_END, "", Command.END, "End"),
    Binding(pygame.K_RIGHTBRACKET, "", Command.FASTER, "] or +"),
    Binding(pygame.K_EQUALS, "", Command.FASTER, ""),
    Binding(pygame.K_PLUS, "", Command.FASTER, ""),
    Binding(pygame.K_KP_PLUS, "", Command.FASTER, ""),
    Binding(pygame.K_LEFTBRACKET, "", Command.SLOWER, "[ or -"),
    Binding(pygame.K_MINUS, "", Command.SLOWER, ""),
    Binding(pygame.K_KP_MINUS, "", Command.SLOWER, ""),
    Binding(pygame.K_r, "", Command.REVERSE, "R"),
    Binding(pygame.K_i, "", Command.MARK_IN, "I"),
    Binding(pygame.K_o, "", Command.MARK_OUT, "O"),
    Binding(pygame.K_c, "", Command.CLEAR_MARKS, "C"),
    Binding(pygame.K_l, "shift", Command.TOGGLE_LOOP, "Shift+L"),
    Binding(pygame.K_UP, "", Command.PREV_EPISODE, "Up / P / PgUp"),
    Binding(pygame.K_p, "", Command.PREV_EPISODE, ""),
    Binding(pygame.K_PAGEUP, "", Command.PREV_EPISODE, ""),
    Binding(pygame.K_DOWN, "", Command.NEXT_EPISODE, "Down / N / PgDn"),
    Binding(pygame.K_n, "", Command.NEXT_EPISODE, ""),
    Binding(pygame.K_PAGEDOWN, "", Command.NEXT_EPISODE, ""),
    Binding(pygame.K_TAB, "", Command.TOGGLE_OVERLAY, "Tab"),
    Binding(pygame.K_l, "", Command.TOGGLE_LIST, "L"),
    Binding(pygame.K_F5, "", Command.RESCAN, "F5"),
    Binding(pygame.K_h, "", Command.TOGGLE_HELP, "H / F1"),
    Binding(pygame.K_F1, "", Command.TOGGLE_HELP, ""),
    Binding(pygame.K_g, "", Command.TAG_GOOD, "G"),
    Binding(pygame.K_b, "", Command.TAG_BAD, "B"),
    Binding(pygame.K_t, "", Command.EDIT_TAGS, "T"),
    Binding(pygame.K_m, "", Command.EDIT_NOTES, "M"),
    Binding(pygame.K_DELETE, "", Command.DELETE, "Delete"),
    Binding(pygame.K_v, "", Command.VERIFY, "V"),
    Binding(pygame.K_j, "", Command.JUMP_DIVERGENCE, "J"),
    Binding(pygame.K_x, "", Command.EXPORT_MP4, "X"),
    Binding(pygame.K_x, "shift", Command.EXPORT_GIF, "Shift+X"),
    Binding(pygame.K_s, "", Command.EXPORT_PNG, "S"),
    Binding(pygame.K_k, "", Command.TRIM, "K"),
    Binding(pygame.K_k, "shift", Command.TRIM_IDLE, "Shift+K"),
    Binding(pygame.K_q, "", Command.QUIT, "Q / Esc"),
    Binding(pygame.K_ESCAPE, "", Command.QUIT, ""),
)

HELP: dict[Command, str] = {
    Command.PLAY_PAUSE: "play / pause",
    Command.STEP_BACK: "step one frame back (hold to repeat)",
    Command.STEP_FORWARD: "step one frame forward (hold to repeat)",
    Command.JUMP_BACK_10: "10 frames back",
    Command.JUMP_FORWARD_10: "10 frames forward",
    Command.JUMP_BACK_100: "100 frames back",
    Command.JUMP_FORWARD_100: "100 frames forward",
    Command.HOME: "first frame",
    Command.END: "last frame",
    Command.FASTER: "faster (up to 8x)",
    Command.SLOWER: "slower (down to 0.25x)",
    Command.REVERSE: "reverse playback direction",
    Command.MARK_IN: "mark in (start of range)",
    Command.MARK_OUT: "mark out (end of range)",
    Command.CLEAR_MARKS: "clear in / out marks",
    Command.TOGGLE_LOOP: "loop the marked range (or the episode)",
    Command.RESCAN: "rescan the folders now (also every 2 s)",
    Command.PREV_EPISODE: "previous episode",
    Command.NEXT_EPISODE: "next episode",
    Command.TOGGLE_OVERLAY: "show / hide the overlay",
    Command.TOGGLE_LIST: "show / hide the episode list",
    Command.TOGGLE_HELP: "this help",
    Command.TAG_GOOD: "toggle tag 'good'",
    Command.TAG_BAD: "toggle tag 'bad'",
    Command.EDIT_TAGS: "edit tags",
    Command.EDIT_NOTES: "edit notes",
    Command.DELETE: "delete the episode (asks first)",
    Command.VERIFY: "verify by re-simulation",
    Command.JUMP_DIVERGENCE: "jump to where verification diverged",
    Command.EXPORT_MP4: "export the marked range (or all) as MP4",
    Command.EXPORT_GIF: "export the marked range (or all) as GIF",
    Command.EXPORT_PNG: "save the current frame as PNG",
    Command.TRIM: "trim: the marked range as a new episode",
    Command.TRIM_IDLE: "trim, cutting idle ends too",
    Command.QUIT: "quit",
}


def modifier_of(mod: int) -> str:
    if mod & pygame.KMOD_CTRL:
        return "ctrl"
    if mod & pygame.KMOD_SHIFT:
        return "shift"
    return ""


def command_for(key: int, mod: int = 0) -> Command | None:
    """The command bound to ``key`` with modifiers ``mod``; a key without a binding for its
    modifier falls back to its plain binding (Shift+= is still "faster")."""
    wanted = modifier_of(mod)
    plain = None
    for b in BINDINGS:
        if b.key == key:
            if b.modifier == wanted:
                return b.command
            if b.modifier == "":
                plain = b.command
    return plain


def help_lines() -> list[tuple[str, str]]:
    """(keys, what) for the help screen, one per command, in binding order."""
    return [(b.label, HELP[b.command]) for b in BINDINGS if b.label]


def apply_playback(command: Command, pb: Playback) -> bool:
    """Apply a playback command to ``pb``; False when ``command`` is not a playback command."""
    moves = {
        Command.STEP_BACK: -1,
        Command.STEP_FORWARD: 1,
        Command.JUMP_BACK_10: -10,
        Command.JUMP_FORWARD_10: 10,
        Command.JUMP_BACK_100: -100,
        Command.JUMP_FORWARD_100: 100,
    }
    if command in moves:
        pb.step(moves[command])
        return True
    actions = {
        Command.PLAY_PAUSE: pb.toggle_play,
        Command.HOME: pb.home,
        Command.END: pb.end,
        Command.FASTER: pb.faster,
        Command.SLOWER: pb.slower,
        Command.REVERSE: pb.toggle_reverse,
        Command.MARK_IN: pb.set_in,
        Command.MARK_OUT: pb.set_out,
        Command.CLEAR_MARKS: pb.clear_marks,
        Command.TOGGLE_LOOP: pb.toggle_loop,
    }
    action = actions.get(command)
    if action is None:
        return False
    action()
    return True

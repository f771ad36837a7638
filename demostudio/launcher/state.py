"""The launcher's state and its pure update, :func:`process_event`.

Keyboard: Up/Down pick a game, Tab moves between the game list and the text fields (env id,
player, replay folder), typing edits the focused field, Enter plays, Ctrl+R opens the replay
viewer on the folder, Ctrl+T the Train panel of the game (:mod:`train_panel`), Esc quits.
Ctrl+A selects a field's text (typing then replaces it, Backspace clears it), Ctrl+U clears it.
Mouse: click a game (double-click plays), a field (its text is selected, as with Tab) or a
button.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import NamedTuple

import pygame

from demostudio.launcher.games import Game, recordings_folder

DOUBLE_CLICK_MS = 400


class Focus(Enum):
    GAMES = "games"
    ENV = "env"
    PLAYER = "player"
    FOLDER = "folder"


FOCUS_ORDER = (Focus.GAMES, Focus.ENV, Focus.PLAYER, Focus.FOLDER)


class Action(NamedTuple):
    """What the launcher window should do next."""

    kind: str
    """``play``, ``replay``, ``train`` or ``quit``."""
    target: str = ""
    """The env id to play or train on, or the folder to replay."""


class Layout(NamedTuple):
    """Where things are, for mouse hit tests (computed by the view from the window size)."""

    rows: list[pygame.Rect]
    env_field: pygame.Rect
    player_field: pygame.Rect
    folder_field: pygame.Rect
    play_button: pygame.Rect
    replay_button: pygame.Rect
    train_button: pygame.Rect


@dataclass
class LauncherState:
    games: tuple[Game, ...]
    root: Path
    """Root recordings folder (episodes of env X go to root/<X>)."""
    player: str = ""
    selected: int = 0
    env_text: str = ""
    folder_text: str = ""
    folder_edited: bool = False
    """The user typed a replay folder; it no longer follows the env id."""
    focus: Focus = Focus.GAMES
    selected_all: bool = False
    """The focused field's text is selected: typing replaces it, Backspace clears it."""
    actions: list[Action] = field(default_factory=list)
    status: str = ""
    status_error: bool = False
    last_click: tuple[int, int] = (-1, -1000)
    """(row, time in ms) of the last click on a game row, for double clicks."""

    def __post_init__(self) -> None:
        if not self.env_text and self.games:
            self.select(self.selected)

    def select(self, index: int) -> None:
        if not self.games:
            return
        self.selected = max(0, min(len(self.games) - 1, index))
        self.env_text = self.games[self.selected].env_id
        self._follow_env()

    def _follow_env(self) -> None:
        if not self.folder_edited:
            text = self.env_text.strip()
            self.folder_text = str(recordings_folder(self.root, text) if text else self.root)

    @property
    def picked(self) -> Game | None:
        """The game in the list the env id field names (None once another id is typed)."""
        if not self.games:
            return None
        game = self.games[self.selected]
        return game if game.env_id == self.env_text.strip() else None

    def focus_on(self, focus: Focus) -> None:
        """Move the focus; a text field's text is selected (typing replaces it)."""
        self.focus = focus
        self.selected_all = focus is not Focus.GAMES and bool(self.text_of(focus))

    def type_text(self, text: str) -> None:
        """Typed into the focused field (replacing its selected text)."""
        current = "" if self.selected_all else self.text_of(self.focus)
        self.selected_all = False
        self._set_text(self.focus, current + text)

    def text_of(self, focus: Focus) -> str:
        return {
            Focus.ENV: self.env_text,
            Focus.PLAYER: self.player,
            Focus.FOLDER: self.folder_text,
        }[focus]

    def _set_text(self, focus: Focus, text: str) -> None:
        if focus is Focus.ENV:
            self.env_text = text
            ids = [g.env_id for g in self.games]
            if text.strip() in ids:  # a listed game typed in full: its row is picked
                self.selected = ids.index(text.strip())
            self._follow_env()
        elif focus is Focus.PLAYER:
            self.player = text
        elif focus is Focus.FOLDER:
            self.folder_text = text
            self.folder_edited = True

    def play(self) -> None:
        env_id = self.env_text.strip()
        if not env_id:
            self.say("Type an env id or pick a game first", error=True)
            return
        self.actions.append(Action("play", env_id))

    def replay(self) -> None:
        folder = self.folder_text.strip()
        if not folder:
            self.say("Type a folder to open in the replay viewer", error=True)
            return
        self.actions.append(Action("replay", folder))

    def train(self) -> None:
        env_id = self.env_text.strip()
        if not env_id:
            self.say("Type an env id or pick a game to train on", error=True)
            return
        self.actions.append(Action("train", env_id))

    def say(self, text: str, error: bool = False) -> None:
        self.status, self.status_error = text, error

    def take_actions(self) -> list[Action]:
        out, self.actions = self.actions, []
        return out


def _key_down(state: LauncherState, event: pygame.event.Event) -> None:
    name = pygame.key.name(event.key)
    ctrl = bool(getattr(event, "mod", 0) & pygame.KMOD_CTRL)
    if name == "escape":
        state.actions.append(Action("quit"))
    elif name in ("return", "[enter]"):
        state.play()
    elif ctrl and name == "r":
        state.replay()
    elif ctrl and name == "t":
        state.train()
    elif name == "tab":
        step = -1 if getattr(event, "mod", 0) & pygame.KMOD_SHIFT else 1
        i = FOCUS_ORDER.index(state.focus)
        state.focus_on(FOCUS_ORDER[(i + step) % len(FOCUS_ORDER)])
    elif state.focus is Focus.GAMES and name in ("up", "down", "page up", "page down"):
        delta = {"up": -1, "down": 1, "page up": -5, "page down": 5}[name]
        state.select(state.selected + delta)
    elif state.focus is Focus.GAMES:
        return
    elif name == "backspace":
        text = "" if state.selected_all else state.text_of(state.focus)[:-1]
        state.selected_all = False
        state._set_text(state.focus, text)
    elif ctrl and name == "u":
        state.selected_all = False
        state._set_text(state.focus, "")
    elif ctrl and name == "a":
        state.selected_all = bool(state.text_of(state.focus))
    elif name in ("left", "right", "home", "end"):
        state.selected_all = False  # the caret stays at the end: only the selection goes


def _click(state: LauncherState, pos: tuple[int, int], layout: Layout, now_ms: int) -> None:
    for i, rect in enumerate(layout.rows):
        if rect.collidepoint(pos):
            state.focus_on(Focus.GAMES)
            last_row, last_ms = state.last_click
            state.select(i)
            if last_row == i and now_ms - last_ms <= DOUBLE_CLICK_MS:
                state.play()
                state.last_click = (-1, -1000)
            else:
                state.last_click = (i, now_ms)
            return
    if layout.play_button.collidepoint(pos):
        state.play()
    elif layout.replay_button.collidepoint(pos):
        state.replay()
    elif layout.train_button.collidepoint(pos):
        state.train()
    elif layout.env_field.collidepoint(pos):
        state.focus_on(Focus.ENV)
    elif layout.player_field.collidepoint(pos):
        state.focus_on(Focus.PLAYER)
    elif layout.folder_field.collidepoint(pos):
        state.focus_on(Focus.FOLDER)


def process_event(
    state: LauncherState, event: pygame.event.Event, layout: Layout, now_ms: int = 0
) -> LauncherState:
    """Update ``state`` for one pygame event (``now_ms`` times double clicks)."""
    if event.type == pygame.QUIT:
        state.actions.append(Action("quit"))
    elif event.type == pygame.KEYDOWN:
        _key_down(state, event)
    elif event.type == pygame.TEXTINPUT and state.focus is not Focus.GAMES:
        text = "".join(ch for ch in event.text if ch.isprintable())
        if text:
            state.type_text(text)
    elif event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
        _click(state, event.pos, layout, now_ms)
    elif event.type == pygame.MOUSEWHEEL and state.focus is Focus.GAMES:
        state.select(state.selected - int(event.y))
    return state

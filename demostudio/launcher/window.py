"""The launcher window's loop: draw, handle events, start a game or the replay viewer and come
back when it closes."""

from __future__ import annotations

import os
from pathlib import Path

import pygame

from demostudio.launcher import view
from demostudio.launcher.games import BUNDLED_GAMES, count_recordings
from demostudio.launcher.state import Action, Focus, LauncherState, process_event
from demostudio.play.icon import set_window_icon
from demostudio.ui.settings import load_settings, recordings_root, save_settings

FPS = 30


def start_game(env_id: str, root: Path, player: str) -> str:
    """Play ``env_id`` in the (re-used) display; returns a status line."""
    from demostudio.play import PlayConfig, run_play

    result = run_play(PlayConfig(env=env_id, out=root, player=player))
    return (
        f"{env_id}: {len(result.saved)} episode(s) saved, {result.discarded} discarded under {root}"
    )


def open_replay(folder: Path) -> None:
    """The replay viewer on ``folder`` (imported here: it is a separate window)."""
    from demostudio import replay

    replay.run_viewer([folder])


def login_name() -> str:
    try:
        return os.getlogin()
    except OSError:
        return os.environ.get("USER", "")


class Launcher:
    """The launcher window. The player is ``player``, else the one saved last time, else the
    login name; the last game played is selected again."""

    def __init__(self, root: Path, player: str = ""):
        if not pygame.get_init():
            pygame.init()
        saved, warning = load_settings()
        self.state = LauncherState(
            BUNDLED_GAMES, Path(root), player=player or saved.player or login_name()
        )
        if saved.env_id:
            ids = [g.env_id for g in BUNDLED_GAMES]
            if saved.env_id in ids:
                self.state.select(ids.index(saved.env_id))
            else:
                self.state._set_text(Focus.ENV, saved.env_id)
        if warning:
            self.state.say(warning, error=True)
        self.counts: dict[str, int] = {}
        self.surface = self._open()
        self.clock = pygame.time.Clock()
        self.refresh_counts()

    def _open(self) -> pygame.Surface:
        pygame.display.set_caption("DemoStudio")
        set_window_icon()
        return pygame.display.set_mode((view.WIDTH, view.HEIGHT))

    def refresh_counts(self) -> None:
        ids = [g.env_id for g in self.state.games]
        typed = self.state.env_text.strip()
        if typed and typed not in ids:
            ids.append(typed)
        self.counts = {env_id: count_recordings(self.state.root, env_id) for env_id in ids}

    @property
    def layout(self) -> view.Layout:
        return view.layout(self.surface.get_size(), len(self.state.games))

    def handle_events(self, events: list[pygame.event.Event]) -> bool:
        """Process events and carry out actions; False when the launcher should close."""
        lay = self.layout
        typed = self.state.env_text
        for event in events:
            process_event(self.state, event, lay, pygame.time.get_ticks())
        if self.state.env_text != typed:
            self.refresh_counts()
        return all(self.run_action(action) for action in self.state.take_actions())

    def run_action(self, action: Action) -> bool:
        if action.kind == "quit":
            return False
        try:
            if action.kind == "play":
                saved, _ = load_settings()
                save_settings(saved._replace(player=self.state.player, env_id=action.target))
                self.state.say(start_game(action.target, self.state.root, self.state.player))
            elif action.kind == "replay":
                folder = Path(action.target)
                if not folder.exists():
                    self.state.say(f"{folder}: no such folder or file", error=True)
                    return True
                open_replay(folder)
                self.state.say(f"Closed the replay viewer on {folder}")
        except (ValueError, FileNotFoundError) as exc:
            # Unknown env ids, bad key maps, unreadable folders: shown, never a crash.
            self.state.say(str(exc), error=True)
        if not pygame.display.get_init():
            pygame.display.init()
        self.surface = self._open()
        pygame.event.clear()
        self.refresh_counts()
        return True

    def draw(self) -> None:
        view.draw(self.surface, self.state, self.counts, self.layout)
        pygame.display.flip()

    def run(self) -> None:
        while self.handle_events(pygame.event.get()):
            self.draw()
            self.clock.tick(FPS)


def run_launcher(root: str | os.PathLike | None = None, player: str = "") -> None:
    """Open the launcher on the recordings under ``root`` (default: your recordings folder,
    :func:`demostudio.ui.settings.recordings_root`) and return when it is closed."""
    Launcher(Path(root) if root is not None else recordings_root(), player).run()

"""The launcher window's loop: draw, handle events, start a game or the replay viewer and come
back when it closes, or show the Train panel of a game (:mod:`training`) until Esc."""

from __future__ import annotations

import os
from pathlib import Path

import pygame

from demostudio.assets import SAMPLE_DEMOS
from demostudio.launcher import run_view, train_panel, train_view, view
from demostudio.launcher.games import (
    BUNDLED_GAMES,
    count_recordings,
    count_unfinished,
    recordings_folder,
)
from demostudio.launcher.runs import run_folders
from demostudio.launcher.state import Action, Focus, LauncherState, process_event
from demostudio.launcher.training import Trainer, default_roots
from demostudio.play.icon import set_window_icon
from demostudio.ui.display import fit_to_desktop, keep_on_screen
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
        self.partials: dict[str, int] = {}
        self.runs: dict[str, int] = {}
        self.train: Trainer | None = None
        """The Train panel, while it is open."""
        self.surface = self._open()
        self.clock = pygame.time.Clock()
        self.refresh_counts()
        if not warning:
            self.say_unfinished()

    def _open(self) -> pygame.Surface:
        pygame.display.set_caption("DemoStudio")
        set_window_icon()
        surface = pygame.display.set_mode((view.WIDTH, view.HEIGHT))
        keep_on_screen()  # back from a larger game or replay window at the same position
        return surface

    def refresh_counts(self) -> None:
        ids = [g.env_id for g in self.state.games]
        typed = self.state.env_text.strip()
        if typed and typed not in ids:
            ids.append(typed)
        self.counts = {env_id: count_recordings(self.state.root, env_id) for env_id in ids}
        self.partials = {env_id: count_unfinished(self.state.root, env_id) for env_id in ids}
        if typed:
            self.runs = {typed: len(run_folders(typed, default_roots()))}

    def say_unfinished(self) -> None:
        """Point at the ``.partial`` files a crash left (the rows show "+N unfinished")."""
        left = {env_id: n for env_id, n in self.partials.items() if n}
        if not left:
            return
        env_id = next(iter(left))
        folder = recordings_folder(self.state.root, env_id)
        others = f" (and in {len(left) - 1} other game folder(s))" if len(left) > 1 else ""
        self.state.say(
            f"{left[env_id]} unfinished recording(s) of {env_id}{others}, left by a crash or "
            f"still being recorded: `demostudio recover {folder}` turns them into episodes",
            error=True,
        )

    @property
    def layout(self) -> view.Layout:
        return view.layout(self.surface.get_size(), len(self.state.games))

    @property
    def train_layout(self) -> train_panel.TrainLayout:
        assert self.train is not None, "the Train panel is not open"
        return train_view.layout(self.surface.get_size(), self.train.state)

    def open_train(self, env_id: str) -> None:
        """The Train panel of ``env_id`` in a larger window (Esc comes back)."""
        picked = self.state.picked
        title = picked.title if picked is not None and picked.env_id == env_id else env_id
        self.train = Trainer(env_id, title, self.state.root, self.state.player)
        self.train.tick()
        size = fit_to_desktop(train_view.TRAIN_SIZE, (view.WIDTH, view.HEIGHT))
        self.surface = pygame.display.set_mode(size)
        keep_on_screen()

    def close_train(self) -> None:
        """Back to the launcher (the runs started go on in their own processes)."""
        if self.train is not None:
            self.train.close()
            self.train = None
        self.surface = self._open()
        self.refresh_counts()

    def _train_events(self, events: list[pygame.event.Event]) -> bool:
        assert self.train is not None
        lay = self.train_layout
        for event in events:
            if event.type == pygame.QUIT:
                self.train.close()
                return False
            train_panel.process_event(self.train.state, event, lay)
        keep_open = self.train.run_actions()
        self.train.tick()
        if not keep_open:
            self.close_train()
        return True

    def handle_events(self, events: list[pygame.event.Event]) -> bool:
        """Process events and carry out actions; False when the launcher should close."""
        if self.train is not None:
            return self._train_events(events)
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
        if action.kind == "train":
            self.open_train(action.target)
            return True
        try:
            if action.kind == "play":
                saved, _ = load_settings()
                save_settings(saved._replace(player=self.state.player, env_id=action.target))
                self.state.say(start_game(action.target, self.state.root, self.state.player))
            elif action.kind == "replay":
                folder = Path(action.target)
                if not folder.exists():
                    self.state.say(self._nothing_to_replay(folder), error=True)
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

    def _nothing_to_replay(self, folder: Path) -> str:
        """Why ``folder`` cannot open: no recordings yet (where the samples are), or a typo."""
        env_id = self.state.env_text.strip()
        if env_id and folder == recordings_folder(self.state.root, env_id):
            sample = recordings_folder(SAMPLE_DEMOS, env_id)
            samples = (
                f"; the shipped samples of it are in {sample}"
                if sample.is_dir()
                else f"; shipped samples of other games are in {SAMPLE_DEMOS}"
            )
            return f"No recordings of {env_id} yet: Enter plays and records it{samples}"
        return f"{folder}: no such folder or file"

    def draw(self) -> None:
        if self.train is not None:
            panel = run_view if self.train.state.opened is not None else train_view
            panel.draw(self.surface, self.train.state, self.train_layout)
        else:
            view.draw(self.surface, self.state, self.counts, self.layout, self.partials, self.runs)
        pygame.display.flip()

    def run(self) -> None:
        while self.handle_events(pygame.event.get()):
            self.draw()
            self.clock.tick(FPS)


def run_launcher(root: str | os.PathLike | None = None, player: str = "") -> None:
    """Open the launcher on the recordings under ``root`` (default: your recordings folder,
    :func:`demostudio.ui.settings.recordings_root`) and return when it is closed."""
    Launcher(Path(root) if root is not None else recordings_root(), player).run()

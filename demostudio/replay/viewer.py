"""The episode viewer window: it draws and carries out requests.

Each pygame event goes through the pure :func:`~demostudio.replay.state.process_event`, which
updates :attr:`Viewer.state` (playback, toggles, dialogs, mouse) and queues
:class:`~demostudio.replay.state.Request` s; :meth:`Viewer.carry_out` does them (open another
episode, tag, delete, verify, export, trim, relayout). ``update(dt)`` advances the playback
clock, collects finished jobs and rescans the folders; ``draw()`` renders the window."""

from __future__ import annotations

import time
from pathlib import Path

import pygame

from demostudio.episode import EpisodeError, VerifyResult
from demostudio.ui import theme
from demostudio.ui.display import fit_to_desktop, keep_on_screen

from .catalog import Catalog
from .controls import Command
from .drawing import Drawn, OverlayCache, ViewerView, draw_viewer
from .episode_actions import EpisodeActions
from .framecache import FrameCache
from .jobs import BackgroundJob
from .layout import compute_layout
from .listpanel import EpisodeList
from .loaded import LoadedEpisode
from .playback import NORMAL_SPEED, Playback
from .qualityscan import QualityScan
from .state import Confirm, Do, Prompt, Request, ViewerState, apply_command, process_event
from .timeline import Timeline
from .verify_process import VerifyProcess

MAX_FPS = 60
MESSAGE_SECONDS = 6.0
MIN_SIZE = (640, 420)
"""The smallest window the viewer opens at (on a desktop smaller than its 1280x800)."""
RESCAN_INTERVAL_S = 2.0
"""How often the viewer looks for episodes added to or removed from its folders."""


class Viewer(EpisodeActions):
    def __init__(
        self,
        paths: list[Path],
        *,
        size: tuple[int, int] = (1280, 800),
        export_dir: Path = Path("exports"),
    ):
        pygame.init()
        self.screen = pygame.display.set_mode(fit_to_desktop(size, MIN_SIZE), pygame.RESIZABLE)
        keep_on_screen()  # the launcher's window, re-used at its position, may stick out
        pygame.display.set_caption("DemoStudio replay")
        pygame.key.set_repeat(300, 30)
        pygame.key.stop_text_input()
        self.export_dir = Path(export_dir)
        self.catalog = Catalog(paths)
        self.episode: LoadedEpisode | None = None
        self.state = ViewerState()
        self.frames = FrameCache()
        self.timeline = Timeline()
        self.episode_list = EpisodeList()
        self.quality = QualityScan()
        self._quality_seen = -1
        self._quality_drawn = 0
        self.jobs: list[BackgroundJob | VerifyProcess] = []
        self.verify_results: dict[Path, VerifyResult] = {}
        self.message = ("", theme.TEXT, 0.0)
        self.dirty = True
        self._text_input = False
        self.overlay = OverlayCache()
        self.drawn = Drawn(None, None)
        """Where the last :meth:`draw` put the picture and the overlay."""
        self._next_rescan = time.monotonic() + RESCAN_INTERVAL_S
        self._relayout()
        self.open_current()

    @property
    def playback(self) -> Playback | None:
        return self.state.playback

    @property
    def running(self) -> bool:
        return self.state.running

    # ---- geometry (for process_event) -------------------------------------------------------

    def on_timeline(self, pos: tuple[int, int]) -> bool:
        return self.timeline.hit(pos)

    def frame_at(self, x: int) -> int:
        return self.timeline.frame_at(x)

    def on_list(self, pos: tuple[int, int]) -> bool:
        return self.layout.list is not None and self.layout.list.collidepoint(pos)

    def list_row(self, pos: tuple[int, int]) -> int | None:
        if self.layout.list is None:
            return None
        return self.episode_list.row_at(pos, len(self.catalog))

    # ---- episodes --------------------------------------------------------------------------

    def _relayout(self) -> None:
        self.layout = compute_layout(self.screen.get_size(), self.state.show_list)
        if self.layout.list is not None:
            self.episode_list.rect = self.layout.list
        self.timeline.rect = self.layout.timeline
        self.timeline.invalidate()
        self.dirty = True

    def open_current(self, keep: Playback | None = None) -> None:
        """Open the catalog's current entry (``keep``: restore its position and marks)."""
        speed = self.playback.speed_index if self.playback else NORMAL_SPEED
        loop = self.playback.loop if self.playback else False
        if self.episode is not None:
            self.episode.close()
        self.episode, self.state.playback = None, None
        self.frames.clear()
        self.timeline.invalidate()
        self.overlay.clear()
        self.dirty = True
        entry = self.catalog.current
        if entry is None:
            return
        self.episode_list.keep_visible(self.catalog.index)
        if not entry.ok:
            return
        try:
            self.episode = LoadedEpisode(entry.path)
        except (EpisodeError, OSError, ValueError, KeyError) as exc:
            self.catalog.mark_error(self.catalog.index, str(exc))
            return
        self.state.playback = Playback(
            self.episode.n_frames, self.episode.fps, speed_index=speed, loop=loop
        )
        if keep is not None:
            self.playback.seek(keep.frame)
            self.playback.mark_in, self.playback.mark_out = keep.mark_in, keep.mark_out
            self.playback.reverse = keep.reverse

    def rescan(self, manual: bool = False) -> None:
        """Pick up episodes added to (or removed from) the folders being viewed; ``manual``
        (F5) also retries files that failed to open and says when nothing changed."""
        self._next_rescan = time.monotonic() + RESCAN_INTERVAL_S
        before = self.catalog.current.path if self.catalog.current else None
        try:
            added, removed = self.catalog.refresh(reread_errors=manual)
        except OSError as exc:
            self.say(f"could not look for new episodes: {exc}", theme.WARN)
            return
        entry = self.catalog.current
        now = entry.path if entry else None
        if now != before or (entry is not None and entry.ok and self.episode is None):
            self.open_current()
        if added or removed:
            parts = [f"{n} {what}" for n, what in ((added, "new"), (removed, "gone")) if n]
            self.say("episodes: " + ", ".join(parts))
        elif manual:
            self.say("no new episodes")

    def select(self, index: int) -> None:
        if self.catalog.select(index):
            self.open_current()

    # ---- events ----------------------------------------------------------------------------

    def say(self, text: str, color: tuple[int, int, int] = theme.TEXT) -> None:
        self.message = (text, color, time.monotonic() + MESSAGE_SECONDS)
        self.dirty = True

    def pump(self) -> None:
        for event in pygame.event.get():
            self.handle_event(event)

    def handle_event(self, event: pygame.event.Event) -> None:
        self.dirty = True
        process_event(self.state, event, self)
        self.carry_out()

    def do(self, command: Command) -> None:
        """Run a key command as if its key had been pressed."""
        apply_command(self.state, command)
        self.carry_out()

    def carry_out(self) -> None:
        """Do what the state has queued, then follow its dialog with text input."""
        for request in self.state.take_requests():
            self._carry_out(request)
        wants_text = isinstance(self.state.dialog, Prompt)
        if wants_text != self._text_input:
            (pygame.key.start_text_input if wants_text else pygame.key.stop_text_input)()
            self._text_input = wants_text

    def _carry_out(self, request: Request) -> None:
        do, value = request
        entry = self.catalog.current
        if do is Do.QUIT:
            self.state.running = False
        elif do is Do.RELAYOUT:
            self._relayout()
        elif do is Do.SELECT:
            self.select(value)
        elif do is Do.MOVE:
            self.select(self.catalog.index + value)
        elif do is Do.SCROLL_LIST:
            self.episode_list.scroll_by(value, len(self.catalog))
        elif do is Do.RESCAN:
            self.rescan(manual=True)
        elif entry is None or entry.summary is None:
            self.say("no episode open", theme.WARN)
        elif do is Do.TAG:
            self.toggle_tag(*value)
        elif do is Do.EDIT_TAGS:
            self.state.dialog = Prompt(
                "Tags (comma separated)", ", ".join(entry.summary.tags), Do.SAVE_TAGS
            )
        elif do is Do.SAVE_TAGS:
            self._edit_metadata(tags=[t.strip() for t in value.split(",")])
        elif do is Do.EDIT_NOTES:
            self.state.dialog = Prompt("Notes", entry.summary.notes, Do.SAVE_NOTES)
        elif do is Do.SAVE_NOTES:
            self._edit_metadata(notes=value)
        elif do is Do.ASK_DELETE:
            self.state.dialog = Confirm(
                "Delete this episode file?", str(entry.path), Request(Do.DELETE)
            )
        elif do is Do.DELETE:
            self.delete_current()
        elif do is Do.VERIFY:
            self.start_verify()
        elif do is Do.JUMP_DIVERGENCE:
            frame = self.divergence_frame()
            if frame is None or self.playback is None:
                self.say("no divergence to jump to (press V to verify)", theme.WARN)
            else:
                self.playback.step(frame - self.playback.frame)
        elif do is Do.EXPORT:
            self.start_export(value)
        elif do is Do.SAVE_PNG:
            self.save_current_frame()
        elif do is Do.TRIM:
            self.start_trim(idle=value)

    # ---- clock -----------------------------------------------------------------------------

    def update(self, dt: float) -> None:
        if self.playback is not None and self.playback.tick(dt):
            self.dirty = True
        if self.playback is not None and self.playback.playing:
            self.dirty = True
        if self.jobs:
            self._collect_jobs()
            self.dirty = True
        if time.monotonic() >= self._next_rescan:
            self.rescan()
        self._update_quality()
        if self.message[0] and time.monotonic() > self.message[2]:
            self.message = ("", theme.TEXT, 0.0)
            self.dirty = True

    def _update_quality(self) -> None:
        """Recompute the list's quality flags when the files changed (off the UI thread)."""
        if self.catalog.version != self._quality_seen and not self.quality.running:
            self._quality_seen = self.catalog.version
            self.quality.update([e.path for e in self.catalog.entries if e.ok])
        if self.quality.version != self._quality_drawn:
            self._quality_drawn = self.quality.version
            self.overlay.clear()
            self.dirty = True

    def run(self) -> None:
        clock = pygame.time.Clock()
        while self.running:
            dt = clock.tick(MAX_FPS) / 1000.0
            self.pump()
            self.update(dt)
            if self.dirty:
                self.draw()
                pygame.display.flip()
        self.close()

    def close(self) -> None:
        self.quality.wait(5.0)
        for job in self.jobs:
            if isinstance(job, VerifyProcess):
                job.cancel()
            else:
                job.wait()  # an export finishes its file
        self.jobs.clear()
        if self.episode is not None:
            self.episode.close()
            self.episode = None

    # ---- drawing ---------------------------------------------------------------------------

    def view(self) -> ViewerView:
        """What the window shows now (read by :func:`draw_viewer`, which changes nothing)."""
        return ViewerView(
            self.screen, self.layout, self.catalog, self.episode, self.playback, self.frames,
            self.timeline, self.episode_list, self.quality, self.verify_results, self.jobs,
            self.message, self.divergence_frame(), self.verify_progress(), self.state.hover_x,
            self.state.show_overlay,
            self.state.show_help, self.state.dialog, self.overlay,
        )  # fmt: skip

    def draw(self) -> None:
        self.drawn = draw_viewer(self.view())
        self.dirty = False

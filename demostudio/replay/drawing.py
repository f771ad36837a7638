"""Rendering the viewer window: frame, overlay, timeline, status bar, help and dialogs.

The viewer hands :func:`draw_viewer` a :class:`ViewerView` (what to show, read only) and
gets back a :class:`Drawn` (where the picture and the overlay went); drawing changes nothing
in the viewer. The parts with caches of their own (frames, timeline, episode list, overlay)
are the viewer's objects, used through their methods."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import pygame

from demostudio.episode import VerifyResult
from demostudio.ui import theme
from demostudio.ui.text import wrap_at_spaces

from .catalog import Catalog
from .controls import help_lines
from .dialogs import draw_dialog
from .framecache import FrameCache, fit_size
from .jobs import BackgroundJob
from .layout import Layout
from .listpanel import EpisodeList, verify_mark
from .loaded import LoadedEpisode
from .overlay import describe_frame, format_time, format_value, quality_lines, render_overlay
from .playback import Playback
from .qualityscan import QualityScan
from .state import Confirm, Prompt
from .timeline import LEGEND, Timeline, draw_mark
from .verify_process import VerifyProcess


class OverlayCache:
    """The overlay panel last rendered and what it showed, keyed by the frame and what the
    panel says about it (rendering its text costs more than a frame at full speed). The
    viewer owns it and clears it when a file's quality or verification may have changed."""

    def __init__(self) -> None:
        self._key: tuple | None = None
        self._image: pygame.Surface | None = None

    def clear(self) -> None:
        self._key = None

    def image(self, key: tuple, lines: Callable[[], list[str]]) -> pygame.Surface | None:
        """The panel for ``key``, rendered from ``lines()`` unless it is the last one's."""
        if key != self._key:
            self._image = render_overlay(lines())
            self._key = key
        return self._image


class ViewerView(NamedTuple):
    """What the viewer window shows, as the viewer hands it to :func:`draw_viewer`."""

    screen: pygame.Surface
    layout: Layout
    catalog: Catalog
    episode: LoadedEpisode | None
    playback: Playback | None
    frames: FrameCache
    timeline: Timeline
    episode_list: EpisodeList
    quality: QualityScan
    verify_results: Mapping[Path, VerifyResult]
    jobs: Sequence[BackgroundJob | VerifyProcess]
    message: tuple[str, tuple[int, int, int], float]
    """Status bar text, its colour and when it goes."""
    divergence: int | None
    """The frame where re-simulation left the recording (None: none known)."""
    verify_progress: tuple[int, int] | None
    """Steps re-simulated and the episode's length while V verifies it (None: not running)."""
    hover_x: int | None
    show_overlay: bool
    show_help: bool
    dialog: Prompt | Confirm | None
    overlay: OverlayCache


class Drawn(NamedTuple):
    """Where the frame's picture and its overlay panel went (None: not drawn)."""

    picture: pygame.Rect | None
    overlay: pygame.Rect | None


def draw_viewer(v: ViewerView) -> Drawn:
    screen = v.screen
    screen.fill(theme.BACKGROUND)
    if v.layout.list is not None:
        v.episode_list.draw(screen, v.catalog, v.quality, v.verify_results)
    drawn = _draw_frame(v)
    if v.episode is not None and v.playback is not None:
        v.timeline.draw(
            screen,
            v.episode,
            v.playback.frame,
            (v.playback.mark_in, v.playback.mark_out),
            v.divergence,
            v.hover_x,
            v.verify_progress,
        )
    else:
        pygame.draw.rect(screen, theme.PANEL, v.layout.timeline)
    _draw_status(v)
    if v.show_help:
        _draw_help(screen)
    if v.dialog is not None:
        draw_dialog(screen, v.dialog)
    return drawn


def _centered_lines(screen: pygame.Surface, area: pygame.Rect, lines, color) -> None:
    font = theme.font(15)
    lines = [part for line in lines for part in wrap_at_spaces(line, font, area.width - 40)]
    y = area.centery - 12 * len(lines)
    for line in lines:
        theme.draw_text(screen, line, (area.centerx, y), 15, color, anchor="midtop")
        y += 24


def _draw_frame(v: ViewerView) -> Drawn:
    area = v.layout.frame
    entry = v.catalog.current
    if entry is None:
        roots = ", ".join(map(str, v.catalog.roots))
        _centered_lines(v.screen, area, ["no episodes found", roots], theme.TEXT_DIM)
        return Drawn(None, None)
    if v.episode is None or v.playback is None:
        _centered_lines(
            v.screen,
            area,
            ["cannot open this episode", str(entry.path), entry.error or ""],
            theme.BAD,
        )
        return Drawn(None, None)
    ep, i = v.episode, v.playback.frame
    picture = area.inflate(-16, -16)
    if ep.has_frames:
        height, width = ep.file.frame_shape[:2]
        size = fit_size((width, height), picture.size)
        surface = v.frames.get(id(ep), i, size, ep.frame)
        picture = surface.get_rect(center=area.center)
        v.screen.blit(surface, picture)
    else:
        obs = format_value(ep.file.observation(i))
        _centered_lines(
            v.screen, area, ["recorded without frames", f"observation {obs}"], theme.TEXT_DIM
        )
    if not v.show_overlay:
        return Drawn(picture, None)
    verified = v.verify_results.get(ep.path)

    def lines() -> list[str]:
        said = describe_frame(ep, i) + quality_lines(v.quality.get(ep.path))
        return said + ([verify_mark(verified, long=True)] if verified is not None else [])

    image = v.overlay.image((id(ep), i, v.catalog.version, id(verified)), lines)
    if image is None:
        return Drawn(picture, None)
    box = image.get_rect(topleft=_overlay_position(area, picture, image))
    v.screen.blit(image, box)
    return Drawn(picture, box)


def _overlay_position(
    area: pygame.Rect, picture: pygame.Rect, overlay: pygame.Surface
) -> tuple[int, int]:
    """Beside the picture where there is room (Atari frames leave margins), else inside its
    top-left corner: the panel lies wholly on the picture or wholly beside it, never across
    its edge (where half of it would vanish against the margin)."""
    width = overlay.get_width() + 20
    if picture.x - area.x >= width:
        return picture.x - width + 10, picture.y
    if area.right - picture.right >= width:
        return picture.right + 10, picture.y
    box = overlay.get_rect(topleft=(picture.x + 10, picture.y + 10))
    box.clamp_ip(area)
    return box.topleft


def _draw_status(v: ViewerView) -> None:
    rect = v.layout.status
    screen = v.screen
    pygame.draw.rect(screen, theme.PANEL_LIGHT, rect)
    y = rect.centery
    pb = v.playback
    if pb is not None:
        state = ("<< " if pb.reverse else ">> ") if pb.playing else "|| "
        text = (
            f"{state}{pb.speed:g}x{'  reverse' if pb.reverse else ''}"
            f"{'  loop' if pb.loop else ''}   frame {pb.frame}/"
            f"{pb.last}   {format_time(pb.seconds)}   {pb.fps:g} fps"
        )
        if pb.mark_in is not None or pb.mark_out is not None:
            start, end = pb.selection()
            text += f"   range {start}..{end}"
        theme.draw_text(screen, text, (rect.x + 10, y), 13, mono=True, anchor="midleft")
    right = rect.right - 10
    for job in v.jobs:
        starting = isinstance(job, VerifyProcess) and not job.total
        label = f"{job.label} starting" if starting else f"{job.label} {job.fraction:4.0%}"
        r = theme.draw_text(
            screen, label, (right, y), 13, theme.ACCENT, mono=True, anchor="midright"
        )
        right = r.x - 16
    text, color, _ = v.message
    if text:
        font = theme.font(13)
        limit = right - rect.centerx + 120
        while text and font.size(text)[0] > limit:
            text = "..." + text[4:]
        theme.draw_text(screen, text, (right, y), 13, color, anchor="midright")
    elif not v.jobs:
        theme.draw_text(screen, "H: help", (right, y), 13, theme.TEXT_DIM, anchor="midright")


def _draw_help(screen: pygame.Surface) -> None:
    lines = help_lines()
    half = (len(lines) + 1) // 2
    legend_rows = (len(LEGEND) + 1) // 2
    width = min(900, screen.get_width() - 40)
    rect = pygame.Rect(0, 0, width, 70 + half * 20 + 34 + legend_rows * 20)
    rect.center = screen.get_rect().center
    rect.top = max(rect.top, 4)
    panel = pygame.Surface(rect.size, pygame.SRCALPHA)
    panel.fill((*theme.PANEL, 235))
    screen.blit(panel, rect)
    pygame.draw.rect(screen, theme.ACCENT, rect, 2, border_radius=4)
    theme.draw_text(screen, "Keys", (rect.x + 14, rect.y + 10), 15, bold=True)
    col_width = rect.width // 2
    for n, (keys, what) in enumerate(lines):
        x = rect.x + 14 + (n // half) * col_width
        y = rect.y + 36 + (n % half) * 20
        theme.draw_text(screen, keys, (x, y), 13, theme.ACCENT, mono=True)
        theme.draw_text(screen, what, (x + 130, y), 13)
    top = rect.y + 36 + half * 20 + 10
    theme.draw_text(screen, "Timeline", (rect.x + 14, top), 15, bold=True)
    for n, item in enumerate(LEGEND):
        x = rect.x + 14 + (n // legend_rows) * col_width
        y = top + 26 + (n % legend_rows) * 20
        draw_mark(screen, item, pygame.Rect(x, y, 36, 16))
        theme.draw_text(screen, item.text, (x + 48, y), 13)
    theme.draw_text(
        screen,
        "mouse: click / drag the timeline to seek, click a list row to open it, wheel to scroll",
        (rect.x + 14, rect.bottom - 4),
        12,
        theme.TEXT_DIM,
        anchor="bottomleft",
    )

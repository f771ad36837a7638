"""Rendering the viewer window: frame, overlay, timeline, status bar, help and dialogs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pygame

from demostudio.ui import theme
from demostudio.ui.text import wrap_at_spaces

from .controls import help_lines
from .dialogs import draw_dialog
from .framecache import fit_size
from .listpanel import verify_mark
from .overlay import describe_frame, format_time, format_value, quality_lines, render_overlay
from .timeline import LEGEND, draw_mark
from .verify_process import VerifyProcess

if TYPE_CHECKING:
    from .viewer import Viewer


def draw_viewer(v: Viewer) -> None:
    screen = v.screen
    screen.fill(theme.BACKGROUND)
    if v.layout.list is not None:
        v.episode_list.draw(screen, v.catalog, v.quality, v.verify_results)
    _draw_frame(v)
    if v.episode is not None and v.playback is not None:
        v.timeline.draw(
            screen,
            v.episode,
            v.playback.frame,
            (v.playback.mark_in, v.playback.mark_out),
            v.divergence_frame(),
            v.state.hover_x,
            v.verify_progress(),
        )
    else:
        pygame.draw.rect(screen, theme.PANEL, v.layout.timeline)
    _draw_status(v)
    if v.state.show_help:
        _draw_help(screen)
    if v.state.dialog is not None:
        draw_dialog(screen, v.state.dialog)


def _centered_lines(screen: pygame.Surface, area: pygame.Rect, lines, color) -> None:
    font = theme.font(15)
    lines = [part for line in lines for part in wrap_at_spaces(line, font, area.width - 40)]
    y = area.centery - 12 * len(lines)
    for line in lines:
        theme.draw_text(screen, line, (area.centerx, y), 15, color, anchor="midtop")
        y += 24


def _draw_frame(v: Viewer) -> None:
    area = v.layout.frame
    entry = v.catalog.current
    if entry is None:
        roots = ", ".join(map(str, v.catalog.roots))
        _centered_lines(v.screen, area, ["no episodes found", roots], theme.TEXT_DIM)
        return
    if v.episode is None or v.playback is None:
        _centered_lines(
            v.screen,
            area,
            ["cannot open this episode", str(entry.path), entry.error or ""],
            theme.BAD,
        )
        return
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
    if v.state.show_overlay:
        verified = v.verify_results.get(ep.path)
        key = (id(ep), i, v.catalog.version, id(verified))
        if key != v._overlay_key:
            lines = describe_frame(ep, i) + quality_lines(v.quality.get(ep.path))
            if verified is not None:
                lines.append(verify_mark(verified, long=True))
            v._overlay_image = render_overlay(lines)
            v._overlay_key = key
        if v._overlay_image is not None:
            v.screen.blit(v._overlay_image, _overlay_position(area, picture, v._overlay_image))


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


def _draw_status(v: Viewer) -> None:
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

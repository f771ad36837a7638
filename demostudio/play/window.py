"""The play window: a HUD bar over the game frame, zoom and resize keeping the frame's aspect,
screenshots."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pygame

from demostudio.play.hud import HUD_HEIGHT
from demostudio.play.icon import set_window_icon
from demostudio.ui import theme
from demostudio.ui.display import desktop_room, keep_on_screen

MIN_WIDTH = 520
ZOOM_STEP = 0.25
ZOOM_MIN, ZOOM_MAX = 0.5, 8.0
# The default zoom fits the frame in about this much screen.
FIT_W, FIT_H = 1000, 720


def default_zoom(frame_w: int, frame_h: int) -> float:
    """The largest whole zoom (at most 4) that fits FIT_W x FIT_H, at least 1."""
    z = math.floor(min(FIT_W / frame_w, FIT_H / frame_h))
    return float(max(1, min(4, z)))


def frame_surface(frame: np.ndarray) -> pygame.Surface:
    """An (H, W, 3) uint8 RGB array as a surface (no copy when the array is contiguous)."""
    h, w = frame.shape[:2]
    return pygame.image.frombuffer(np.ascontiguousarray(frame), (w, h), "RGB")


class PlayWindow:
    """Owns the pygame display while a game is shown."""

    def __init__(self, frame_w: int, frame_h: int, caption: str, zoom: float | None = None):
        if not pygame.get_init():
            pygame.init()
        self.frame_w, self.frame_h = int(frame_w), int(frame_h)
        pygame.display.set_caption(caption)
        set_window_icon()
        wanted = default_zoom(frame_w, frame_h) if zoom is None else float(zoom)
        self.zoom = min(wanted, self.max_zoom())
        self.surface = self._set_size(*self._size_for_zoom(self.zoom))
        self._scaled: pygame.Surface | None = None

    # ---- geometry ------------------------------------------------------------------------------

    def _size_for_zoom(self, zoom: float) -> tuple[int, int]:
        w = round(self.frame_w * zoom)
        h = round(self.frame_h * zoom)
        return max(MIN_WIDTH, w), HUD_HEIGHT + h

    def _set_size(self, w: int, h: int) -> pygame.Surface:
        self.surface = pygame.display.set_mode((w, h), pygame.RESIZABLE)
        keep_on_screen()
        return self.surface

    def max_zoom(self) -> float:
        """The largest zoom whose window (HUD included) fits the desktop, leaving room for a
        title bar and panel (at least :data:`ZOOM_MIN`, at most :data:`ZOOM_MAX`)."""
        room = desktop_room()
        if room is None:
            return ZOOM_MAX
        fit = min(room[0] / self.frame_w, (room[1] - HUD_HEIGHT) / self.frame_h)
        return max(ZOOM_MIN, min(ZOOM_MAX, fit))

    @property
    def hud_rect(self) -> pygame.Rect:
        return pygame.Rect(0, 0, self.surface.get_width(), HUD_HEIGHT)

    @property
    def game_rect(self) -> pygame.Rect:
        """The area under the HUD."""
        w, h = self.surface.get_size()
        return pygame.Rect(0, HUD_HEIGHT, w, max(1, h - HUD_HEIGHT))

    @property
    def frame_rect(self) -> pygame.Rect:
        """Where the frame is drawn: as large as fits under the HUD, same aspect, centred."""
        area = self.game_rect
        scale = min(area.w / self.frame_w, area.h / self.frame_h)
        w = max(1, round(self.frame_w * scale))
        h = max(1, round(self.frame_h * scale))
        return pygame.Rect(area.centerx - w // 2, area.centery - h // 2, w, h)

    def set_zoom(self, zoom: float) -> None:
        self.zoom = min(ZOOM_MAX, self.max_zoom(), max(ZOOM_MIN, zoom))
        self._set_size(*self._size_for_zoom(self.zoom))

    def zoom_in(self) -> bool:
        """One zoom step larger; False when the window already fills the desktop."""
        before = self.surface.get_size()
        self.set_zoom(self.zoom + ZOOM_STEP)
        return self.surface.get_size() != before

    def zoom_out(self) -> None:
        self.set_zoom(self.zoom - ZOOM_STEP)

    def resize(self, w: int, h: int) -> None:
        """Follow a window-manager resize; the frame keeps its aspect (letterboxed)."""
        w, h = max(MIN_WIDTH // 2, w), max(HUD_HEIGHT + 40, h)
        self._set_size(w, h)
        self.zoom = min((w / self.frame_w), (h - HUD_HEIGHT) / self.frame_h)

    # ---- drawing -------------------------------------------------------------------------------

    def draw_frame(self, frame: np.ndarray | None) -> pygame.Rect:
        """Clear the window and draw ``frame`` scaled into :attr:`frame_rect`."""
        self.surface.fill(theme.BACKGROUND)
        rect = self.frame_rect
        if frame is None:
            return rect
        h, w = frame.shape[:2]
        if (w, h) != (self.frame_w, self.frame_h):
            self.frame_w, self.frame_h = w, h
            rect = self.frame_rect
        src = frame_surface(frame)
        if rect.size == (w, h):
            self.surface.blit(src, rect)
        else:
            if self._scaled is None or self._scaled.get_size() != rect.size:
                self._scaled = pygame.Surface(rect.size, 0, src)
            pygame.transform.scale(src, rect.size, self._scaled)
            self.surface.blit(self._scaled, rect)
        return rect

    def flip(self) -> None:
        pygame.display.flip()

    def screenshot(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        pygame.image.save(self.surface, str(path))
        return path


__all__ = ["MIN_WIDTH", "PlayWindow", "default_zoom", "frame_surface"]

"""Colours, fonts and text drawing shared by every window of the studio."""

from __future__ import annotations

import pygame

from demostudio.assets import FONTS

BACKGROUND = (24, 26, 31)
PANEL = (36, 39, 46)
PANEL_LIGHT = (52, 56, 66)
TEXT = (225, 228, 235)
TEXT_DIM = (140, 146, 160)
ACCENT = (90, 160, 255)
SELECTION = (40, 78, 140)
"""Behind selected text (a launcher field after Ctrl+A or a click)."""
GOOD = (90, 200, 120)
WARN = (240, 190, 70)
BAD = (235, 80, 80)
RECORDING = (230, 50, 50)


_FONTS: dict[tuple[int, bool, bool], pygame.font.Font] = {}


def font(size: int = 16, mono: bool = False, bold: bool = False) -> pygame.font.Font:
    """A bundled DejaVu font, cached; initialises pygame.font when needed. A font cached before
    ``pygame.quit()`` is dead afterwards, so the cache is rebuilt when that happened."""
    key = (size, mono, bold)
    cached = _FONTS.get(key)
    if cached is not None and pygame.font.get_init():
        try:
            cached.get_height()
            return cached
        except pygame.error:
            _FONTS.clear()
    if not pygame.font.get_init():
        pygame.font.init()
        _FONTS.clear()
    name = "DejaVuSansMono.ttf" if mono else ("DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf")
    _FONTS[key] = pygame.font.Font(str(FONTS / name), size)
    return _FONTS[key]


def draw_text(
    surface: pygame.Surface,
    text: str,
    pos: tuple[int, int],
    size: int = 16,
    color: tuple[int, int, int] = TEXT,
    *,
    mono: bool = False,
    bold: bool = False,
    anchor: str = "topleft",
    background: tuple[int, int, int] | None = None,
) -> pygame.Rect:
    """Draw one line of text; ``anchor`` is a pygame.Rect attribute name for ``pos``."""
    image = font(size, mono, bold).render(text, True, color, background)
    rect = image.get_rect(**{anchor: pos})
    surface.blit(image, rect)
    return rect

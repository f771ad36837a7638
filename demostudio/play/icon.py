"""The studio's window icon: drawn with pygame, saved once as ``assets/icons/demostudio.png``
(``python -m demostudio.play.icon`` redraws it)."""

from __future__ import annotations

import pygame

from demostudio.assets import ICONS
from demostudio.ui import theme

ICON_PATH = ICONS / "demostudio.png"


def draw_icon(size: int = 64) -> pygame.Surface:
    """A rounded dark tile with a play triangle and a red recording dot."""
    s = pygame.Surface((size, size), pygame.SRCALPHA)
    u = size / 64
    pygame.draw.rect(s, theme.PANEL_LIGHT, s.get_rect(), border_radius=int(12 * u))
    radius = int(12 * u)
    pygame.draw.rect(s, theme.ACCENT, s.get_rect(), width=max(1, int(3 * u)), border_radius=radius)
    tri = [(18 * u, 16 * u), (18 * u, 48 * u), (44 * u, 32 * u)]
    pygame.draw.polygon(s, theme.TEXT, tri)
    pygame.draw.circle(s, theme.RECORDING, (48 * u, 16 * u), 8 * u)
    return s


def load_icon() -> pygame.Surface:
    """The bundled icon, or a freshly drawn one if the PNG is missing."""
    if ICON_PATH.exists():
        try:
            return pygame.image.load(str(ICON_PATH))
        except pygame.error:
            pass
    return draw_icon()


def set_window_icon() -> None:
    pygame.display.set_icon(load_icon())


if __name__ == "__main__":
    ICON_PATH.parent.mkdir(parents=True, exist_ok=True)
    pygame.image.save(draw_icon(64), str(ICON_PATH))
    print(ICON_PATH)

"""Modal dialogs of the viewer: a one-line text prompt (tags, notes) and a yes/no
confirmation (delete). While one is open it receives every event."""

from __future__ import annotations

from collections.abc import Callable

import pygame

from demostudio.ui import theme

WIDTH = 560


def _panel(surface: pygame.Surface, height: int) -> pygame.Rect:
    shade = pygame.Surface(surface.get_size(), pygame.SRCALPHA)
    shade.fill((0, 0, 0, 140))
    surface.blit(shade, (0, 0))
    rect = pygame.Rect(0, 0, min(WIDTH, surface.get_width() - 20), height)
    rect.center = surface.get_rect().center
    pygame.draw.rect(surface, theme.PANEL, rect, border_radius=8)
    pygame.draw.rect(surface, theme.ACCENT, rect, 2, border_radius=8)
    return rect


class TextPrompt:
    """Edit one line of text: type, Backspace, Enter to accept, Escape to cancel."""

    def __init__(self, title: str, text: str, on_accept: Callable[[str], None]):
        self.title = title
        self.text = text
        self.on_accept = on_accept
        self.closed = False
        pygame.key.start_text_input()

    def handle(self, event: pygame.event.Event) -> None:
        if event.type == pygame.TEXTINPUT:
            self.text += event.text
        elif event.type == pygame.KEYDOWN:
            if event.key in (pygame.K_RETURN, pygame.K_KP_ENTER):
                self._close()
                self.on_accept(self.text)
            elif event.key == pygame.K_ESCAPE:
                self._close()
            elif event.key == pygame.K_BACKSPACE:
                self.text = self.text[:-1]

    def _close(self) -> None:
        self.closed = True
        pygame.key.stop_text_input()

    def draw(self, surface: pygame.Surface) -> None:
        rect = _panel(surface, 110)
        theme.draw_text(surface, self.title, (rect.x + 16, rect.y + 12), 15, bold=True)
        box = pygame.Rect(rect.x + 16, rect.y + 42, rect.width - 32, 28)
        pygame.draw.rect(surface, theme.BACKGROUND, box, border_radius=4)
        font = theme.font(14, mono=True)
        shown = self.text
        while shown and font.size(shown + "_")[0] > box.width - 12:
            shown = shown[1:]
        theme.draw_text(surface, shown + "_", (box.x + 6, box.y + 5), 14, mono=True)
        theme.draw_text(
            surface, "Enter: save    Esc: cancel", (rect.x + 16, rect.y + 80), 12, theme.TEXT_DIM
        )


class Confirm:
    """Ask a yes/no question: Y or Enter runs ``on_yes``; N or Escape cancels."""

    def __init__(self, question: str, detail: str, on_yes: Callable[[], None]):
        self.question = question
        self.detail = detail
        self.on_yes = on_yes
        self.closed = False

    def handle(self, event: pygame.event.Event) -> None:
        if event.type != pygame.KEYDOWN:
            return
        if event.key in (pygame.K_y, pygame.K_RETURN, pygame.K_KP_ENTER):
            self.closed = True
            self.on_yes()
        elif event.key in (pygame.K_n, pygame.K_ESCAPE):
            self.closed = True

    def draw(self, surface: pygame.Surface) -> None:
        rect = _panel(surface, 110)
        theme.draw_text(
            surface, self.question, (rect.x + 16, rect.y + 12), 15, theme.WARN, bold=True
        )
        font = theme.font(12, mono=True)
        detail = self.detail
        while detail and font.size(detail)[0] > rect.width - 32:
            detail = "..." + detail[4:]
        theme.draw_text(surface, detail, (rect.x + 16, rect.y + 44), 12, mono=True)
        theme.draw_text(
            surface, "Y / Enter: yes    N / Esc: no", (rect.x + 16, rect.y + 80), 12, theme.TEXT_DIM
        )

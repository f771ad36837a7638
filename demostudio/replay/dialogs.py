"""Drawing the viewer's modal dialogs (their state and keys live in
:mod:`~demostudio.replay.state`): a one-line text prompt (tags, notes) and a yes/no
confirmation (delete)."""

from __future__ import annotations

import pygame

from demostudio.ui import theme

from .state import Confirm, Prompt

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


def draw_prompt(surface: pygame.Surface, prompt: Prompt) -> None:
    rect = _panel(surface, 110)
    theme.draw_text(surface, prompt.title, (rect.x + 16, rect.y + 12), 15, bold=True)
    box = pygame.Rect(rect.x + 16, rect.y + 42, rect.width - 32, 28)
    pygame.draw.rect(surface, theme.BACKGROUND, box, border_radius=4)
    font = theme.font(14, mono=True)
    shown = prompt.text
    while shown and font.size(shown + "_")[0] > box.width - 12:
        shown = shown[1:]
    theme.draw_text(surface, shown + "_", (box.x + 6, box.y + 5), 14, mono=True)
    theme.draw_text(
        surface, "Enter: save    Esc: cancel", (rect.x + 16, rect.y + 80), 12, theme.TEXT_DIM
    )


def draw_confirm(surface: pygame.Surface, confirm: Confirm) -> None:
    rect = _panel(surface, 110)
    theme.draw_text(
        surface, confirm.question, (rect.x + 16, rect.y + 12), 15, theme.WARN, bold=True
    )
    font = theme.font(12, mono=True)
    detail = confirm.detail
    while detail and font.size(detail)[0] > rect.width - 32:
        detail = "..." + detail[4:]
    theme.draw_text(surface, detail, (rect.x + 16, rect.y + 44), 12, mono=True)
    theme.draw_text(
        surface, "Y / Enter: yes    N / Esc: no", (rect.x + 16, rect.y + 80), 12, theme.TEXT_DIM
    )


def draw_dialog(surface: pygame.Surface, dialog: Prompt | Confirm) -> None:
    if isinstance(dialog, Prompt):
        draw_prompt(surface, dialog)
    else:
        draw_confirm(surface, dialog)

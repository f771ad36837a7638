"""Where each part of the viewer window goes."""

from __future__ import annotations

from typing import NamedTuple

import pygame

LIST_WIDTH = 300
TIMELINE_HEIGHT = 96
STATUS_HEIGHT = 28


class Layout(NamedTuple):
    list: pygame.Rect | None
    """The episode list (None when hidden)."""
    frame: pygame.Rect
    timeline: pygame.Rect
    status: pygame.Rect


def compute_layout(size: tuple[int, int], show_list: bool) -> Layout:
    width, height = size
    list_width = min(LIST_WIDTH, width // 3) if show_list else 0
    status = pygame.Rect(0, height - STATUS_HEIGHT, width, STATUS_HEIGHT)
    timeline = pygame.Rect(
        list_width, status.y - TIMELINE_HEIGHT, width - list_width, TIMELINE_HEIGHT
    )
    frame = pygame.Rect(list_width, 0, width - list_width, max(1, timeline.y))
    panel = pygame.Rect(0, 0, list_width, status.y) if show_list else None
    return Layout(panel, frame, timeline, status)

"""Decoded, scaled frames as pygame surfaces, kept in a small LRU cache so stepping back and
forth or replaying a stretch does not decode and scale the same frame twice."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pygame

MAX_SURFACES = 96


def fit_size(frame_size: tuple[int, int], area: tuple[int, int]) -> tuple[int, int]:
    """The largest size of ``frame_size`` that fits ``area``, keeping the aspect ratio; an
    integer multiple when the frame is enlarged 2x or more, so pixel art stays sharp."""
    width, height = frame_size
    scale = min(area[0] / width, area[1] / height)
    if scale >= 2:
        scale = float(int(scale))
    return max(1, int(width * scale)), max(1, int(height * scale))


def to_surface(frame: np.ndarray, size: tuple[int, int]) -> pygame.Surface:
    """An [H, W, 3] uint8 frame as a surface of ``size`` (nearest neighbour when enlarging,
    smooth when shrinking)."""
    height, width = frame.shape[:2]
    frame = np.ascontiguousarray(frame)
    source = pygame.image.frombuffer(frame.data, (width, height), "RGB")
    if size == (width, height):
        surface = source.copy()
    elif size[0] < width or size[1] < height:
        surface = pygame.transform.smoothscale(source, size)
    else:
        surface = pygame.transform.scale(source, size)
    # In the display's pixel format a blit is a plain copy (no per-pixel conversion).
    return surface.convert() if pygame.display.get_surface() is not None else surface


class FrameCache:
    def __init__(self, max_items: int = MAX_SURFACES):
        self.max_items = max_items
        self._items: OrderedDict[tuple, pygame.Surface] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, episode_key: object, index: int, size: tuple[int, int], read) -> pygame.Surface:
        """The surface of frame ``index`` at ``size``; ``read(index)`` decodes it on a miss."""
        key = (episode_key, index, size)
        surface = self._items.get(key)
        if surface is not None:
            self._items.move_to_end(key)
            self.hits += 1
            return surface
        self.misses += 1
        surface = to_surface(read(index), size)
        self._items[key] = surface
        if len(self._items) > self.max_items:
            self._items.popitem(last=False)
        return surface

    def clear(self) -> None:
        self._items.clear()

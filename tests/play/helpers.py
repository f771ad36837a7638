"""Posting real pygame key events."""

from __future__ import annotations

import pygame


def key_event(key: int, down: bool = True, mod: int = 0) -> pygame.event.Event:
    return pygame.event.Event(
        pygame.KEYDOWN if down else pygame.KEYUP, key=key, mod=mod, scancode=0, unicode=""
    )


def post_key(key: int, down: bool = True, mod: int = 0) -> None:
    pygame.event.post(key_event(key, down, mod))


def tap(key: int, mod: int = 0) -> None:
    post_key(key, True, mod)
    post_key(key, False, mod)

"""Posting real pygame key events, and a keyboard play session to post them to."""

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


FAST = 2000.0
"""Steps per second for sessions in tests: the loop barely waits."""


def play_session(tmp_path, env="MountainCar-v0", **kw):
    """A recording keyboard session (player "tester", no countdown) with its first episode
    started."""
    from demostudio.play import PlayConfig, build_session

    kw.setdefault("fps", FAST)
    cfg = PlayConfig(env=env, out=tmp_path / "demos", countdown=0, player="tester", **kw)
    s = build_session(cfg)
    s.new_episode()
    return s


def ticks(s, n: int) -> None:
    """``n`` ticks of a session, none of them its last."""
    for _ in range(n):
        assert s.tick()

"""Drive a viewer with real pygame events, the way a person would."""

from __future__ import annotations

import json

import h5py
import numpy as np
import pygame

from demostudio.episode import read_summary


def press(viewer, key: int, mod: int = 0, times: int = 1) -> None:
    """Post ``times`` KEYDOWN events (what holding a key repeats) and one KEYUP, then pump."""
    for _ in range(times):
        pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=key, mod=mod, unicode=""))
    pygame.event.post(pygame.event.Event(pygame.KEYUP, key=key, mod=mod))
    viewer.pump()


def type_text(viewer, text: str) -> None:
    pygame.event.post(pygame.event.Event(pygame.TEXTINPUT, text=text))
    viewer.pump()


def click(viewer, pos: tuple[int, int]) -> None:
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=pos, button=1))
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONUP, pos=pos, button=1))
    viewer.pump()


def drag(viewer, start: tuple[int, int], path: list[tuple[int, int]], release: bool = True):
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=start, button=1))
    last = start
    for pos in path:
        rel = (pos[0] - last[0], pos[1] - last[1])
        pygame.event.post(
            pygame.event.Event(pygame.MOUSEMOTION, pos=pos, rel=rel, buttons=(1, 0, 0))
        )
        last = pos
    if release:
        pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONUP, pos=last, button=1))
    viewer.pump()


def wait_jobs(viewer, timeout: float = 60.0) -> None:
    for job in list(viewer.jobs):
        assert job.wait(timeout), f"{job.label} did not finish in {timeout} s"
    viewer.update(0.0)


def first_episode(viewer):
    """Move a viewer (which opens on the newest episode) to the first one in the list."""
    press(viewer, pygame.K_PAGEUP, times=len(viewer.catalog))
    return viewer


def add_takeovers(path, stretches, names=("policy:scripted", "person:ann")):
    """Give a file the who-acted contract's ``actors`` / ``actor_names``: ``stretches`` are
    the (start, end) step ranges the person took."""
    n = read_summary(path).length
    actors = np.zeros(n, np.uint8)
    for a, b in stretches:
        actors[a:b] = 1
    with h5py.File(path, "r+") as f:
        if "actors" in f:  # written since schema 2: replace the recorder's own
            del f["actors"]
        f["actors"] = actors
        f.attrs["actor_names"] = json.dumps(list(names))

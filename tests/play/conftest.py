"""Headless pygame for the play and launcher tests, and helpers to post real key events."""

from __future__ import annotations

import os
import tempfile

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.gettempdir())
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import pygame
import pytest


@pytest.fixture(autouse=True)
def _config_home(tmp_path_factory, monkeypatch):
    """The launcher's remembered settings go to a temporary folder, never ~/.config."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))


@pytest.fixture(autouse=True)
def _pygame():
    pygame.init()
    pygame.event.clear()
    yield
    if pygame.display.get_init():
        pygame.event.clear()

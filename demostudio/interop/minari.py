"""Minari interop: :func:`export_minari` (episode files -> a Minari dataset) and
:func:`import_minari` (a Minari dataset -> episode files). See
:mod:`demostudio.interop.minari_store` for what DemoStudio adds to Minari's layout."""

from __future__ import annotations

from .minari_export import export_minari
from .minari_import import import_minari
from .minari_store import EPISODE_ATTR, EXTRA_KEY, FRAME_KEY, METADATA_KEY

__all__ = [
    "EPISODE_ATTR",
    "EXTRA_KEY",
    "FRAME_KEY",
    "METADATA_KEY",
    "export_minari",
    "import_minari",
]

"""Where the bundled assets (fonts, icons, key maps) live: ``assets/`` beside the packages;
the bundled sample demos: ``demos/`` beside them."""

from __future__ import annotations

import os
from pathlib import Path

ASSETS = Path(__file__).resolve().parent.parent / "assets"
FONTS = ASSETS / "fonts"
ICONS = ASSETS / "icons"
KEYMAPS = ASSETS / "keymaps"
SAMPLE_DEMOS = ASSETS.parent / "demos"
"""The bundled sample demos: read by commands, never written to (recordings, runs and exports
go elsewhere)."""


def in_sample_demos(path: str | os.PathLike) -> bool:
    """``path`` (links and relative parts resolved) is the bundled sample demos folder or
    lies inside it."""
    demos = os.path.realpath(SAMPLE_DEMOS)
    return os.path.commonpath([demos, os.path.realpath(path)]) == demos

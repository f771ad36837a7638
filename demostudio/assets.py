"""Where the bundled assets (fonts, icons, key maps) live: ``assets/`` beside the packages;
the bundled sample demos: ``demos/`` beside them."""

from __future__ import annotations

from pathlib import Path

ASSETS = Path(__file__).resolve().parent.parent / "assets"
FONTS = ASSETS / "fonts"
ICONS = ASSETS / "icons"
KEYMAPS = ASSETS / "keymaps"
SAMPLE_DEMOS = ASSETS.parent / "demos"
"""The bundled sample demos: read by commands, never written to (recordings, runs and exports
go elsewhere)."""

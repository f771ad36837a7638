"""Where the bundled assets (fonts, icons, key maps) live: ``assets/`` beside the packages."""

from __future__ import annotations

from pathlib import Path

ASSETS = Path(__file__).resolve().parent.parent / "assets"
FONTS = ASSETS / "fonts"
ICONS = ASSETS / "icons"
KEYMAPS = ASSETS / "keymaps"

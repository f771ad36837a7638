"""What the launcher remembers between runs (player name, last game), as JSON in
``$XDG_CONFIG_HOME/demostudio/launcher.json`` (``~/.config/...`` by default)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import NamedTuple


class Settings(NamedTuple):
    player: str = ""
    env_id: str = ""


def settings_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "demostudio" / "launcher.json"


def load_settings(path: Path | None = None) -> tuple[Settings, str]:
    """The saved settings and a warning ("" when fine); a bad file gives defaults + warning."""
    path = path or settings_path()
    if not path.exists():
        return Settings(), ""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return Settings(), f"ignored {path}: expected JSON ({exc})"
    if not isinstance(doc, dict):
        return Settings(), f"ignored {path}: expected a JSON object, got {type(doc).__name__}"
    player, env_id = doc.get("player", ""), doc.get("env_id", "")
    if not isinstance(player, str) or not isinstance(env_id, str):
        return Settings(), f"ignored {path}: expected text for player and env_id"
    return Settings(player, env_id), ""


def save_settings(settings: Settings, path: Path | None = None) -> None:
    """Best effort: a read-only config folder must not stop anyone playing."""
    path = path or settings_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(settings._asdict(), indent=2), encoding="utf-8")
        tmp.replace(path)
    except OSError:
        pass

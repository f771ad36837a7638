"""What DemoStudio remembers between runs (player name, last game, your recordings folder), as
JSON in ``$XDG_CONFIG_HOME/demostudio/launcher.json`` (``~/.config/...`` by default), and
where your recordings go.

Your recordings live in a folder of their own, never among the sample demos shipped in the
repository: ``$XDG_DATA_HOME/demostudio/recordings`` (``~/.local/share/demostudio/recordings``
by default), or the folder given to ``demostudio launch --out DIR``, which is remembered.
No pygame: the CLI reads it at every start, so a bad file (a FIFO, a huge or deeply nested
one) is ignored with a warning, never waited on or read whole."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import NamedTuple

from demostudio.episode import EpisodeError
from demostudio.episode.jsonfile import read_json_file

MAX_SETTINGS_BYTES = 1024 * 1024
"""Largest settings file read (it holds three short texts)."""


class Settings(NamedTuple):
    player: str = ""
    env_id: str = ""
    recordings: str = ""
    """The recordings folder chosen with ``launch --out`` ("" = :func:`default_recordings`)."""


def settings_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "demostudio" / "launcher.json"


def user_data_folder() -> Path:
    """``$XDG_DATA_HOME/demostudio`` (``~/.local/share/demostudio`` by default): what
    DemoStudio keeps for the user (recordings, the launcher's training runs)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "demostudio"


def default_recordings() -> Path:
    """``$XDG_DATA_HOME/demostudio/recordings`` (``~/.local/share/...`` by default)."""
    return user_data_folder() / "recordings"


def derived_output_folder(source: Path) -> Path | None:
    """Where a file made from the episode ``source`` (a trimmed piece) goes by default: None
    for beside it; for one of the bundled sample demos, the recordings folder of its env
    (outputs never go among the samples)."""
    from demostudio.assets import in_sample_demos

    if not in_sample_demos(source):
        return None
    from demostudio.episode import env_folder_name, read_summary

    return recordings_root() / env_folder_name(read_summary(source).env_id)


def recordings_root() -> Path:
    """Where new recordings go: the remembered folder, else :func:`default_recordings`."""
    saved, _ = load_settings()
    return Path(saved.recordings) if saved.recordings else default_recordings()


def remember_recordings(folder: Path) -> None:
    """Make ``folder`` (stored absolute) the recordings folder of later runs."""
    saved, _ = load_settings()
    save_settings(saved._replace(recordings=str(Path(folder).absolute())))


def load_settings(path: Path | None = None) -> tuple[Settings, str]:
    """The saved settings and a warning ("" when fine); a bad file gives defaults + warning."""
    path = path or settings_path()
    if not os.path.lexists(path):
        return Settings(), ""
    try:  # read at every start of the CLI: a FIFO or a huge file must not stop it
        doc = read_json_file(path, "a JSON settings file", MAX_SETTINGS_BYTES)
    except EpisodeError as exc:
        return Settings(), f"ignored {exc}"
    if not isinstance(doc, dict):
        return Settings(), f"ignored {path}: expected a JSON object, got {type(doc).__name__}"
    values = [doc.get(name, "") for name in Settings._fields]
    if not all(isinstance(v, str) for v in values):
        return Settings(), f"ignored {path}: expected text for {', '.join(Settings._fields)}"
    return Settings(*values), ""


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

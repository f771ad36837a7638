"""Hostile stand-ins for a file a command reads (shared by the tests of the JSON and
JSON-lines readers: key maps, metrics.jsonl, results.jsonl)."""

from __future__ import annotations

import os
from pathlib import Path

KINDS = ("fifo", "devzero", "folder", "loop", "huge", "nested")


def make_hostile(path: Path, kind: str) -> bool:
    """Put a ``kind`` stand-in at ``path`` (a FIFO, a link to /dev/zero, a folder, a link
    loop, a sparse 2 GB file, JSON nested 100,000 deep); False for a kind not in
    :data:`KINDS` (the caller makes its own)."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "devzero":
        path.symlink_to("/dev/zero")
    elif kind == "folder":
        path.mkdir()
    elif kind == "loop":
        path.symlink_to(path.name)
    elif kind == "huge":
        with open(path, "wb") as f:
            f.truncate(2 * 1024**3)  # sparse: such files used to be read whole
    elif kind == "nested":
        path.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    else:
        return False
    return True

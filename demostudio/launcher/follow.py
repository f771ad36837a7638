"""A run's metrics.jsonl followed as it grows: each refresh reads only the bytes appended since
the last one (a long run's file reaches megabytes; the window's thread must not parse it all
again at every new row), at most :data:`READ_CHUNK` bytes at a time.

The file is read as hostile input, as ``demostudio plot`` reads it: a regular file (a FIFO
would block), lines of bounded length, UTF-8 JSON of bounded depth, rows that are objects with
a text ``kind`` and a whole ``env_steps`` >= 0; anything else is skipped. A line is read once
its newline is written (a live run's last line may be half written). A file that shrinks or is
replaced is read again from its start."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from demostudio.episode import EpisodeError
from demostudio.episode.hostile import not_a_regular_file
from demostudio.episode.jsonfile import MAX_JSON_LINE_BYTES, parse_json_text
from demostudio.launcher.progress import Clock, Progress

READ_CHUNK = 4 * 1024 * 1024
"""The most bytes read per refresh (a file larger than this is caught up over a few)."""


class MetricsFollower:
    """The :class:`Progress` of one metrics.jsonl, brought up to date by :meth:`update`."""

    def __init__(self, path: Path, clock: Clock = "env_steps"):
        self.path = Path(path)
        self.clock: Clock = clock
        self.progress = Progress(clock=clock)
        self._offset = 0
        self._identity: tuple[int, int] | None = None
        self._skipping = False
        """Inside a line longer than MAX_JSON_LINE_BYTES: skipped up to its newline."""

    def restart(self, clock: Clock | None = None) -> None:
        self.clock = clock or self.clock
        self.progress = Progress(clock=self.clock)
        self._offset, self._skipping = 0, False

    def update(self) -> bool:
        """Read what was appended; True when rows were added (or the file was restarted)."""
        if not_a_regular_file(self.path, "a metrics file") is not None:
            changed = self._offset > 0
            self.restart()
            self._identity = None
            return changed
        try:
            with open(self.path, "rb") as fh:
                st = os.fstat(fh.fileno())
                restarted = False
                if (st.st_dev, st.st_ino) != self._identity or st.st_size < self._offset:
                    self._identity = (st.st_dev, st.st_ino)
                    self.restart()
                    restarted = True
                if st.st_size == self._offset:
                    return restarted
                fh.seek(self._offset)
                data = fh.read(min(READ_CHUNK, st.st_size - self._offset))
        except OSError:
            return False
        end = data.rfind(b"\n")
        if end < 0:  # no whole line yet (or one longer than the chunk: skipped)
            if len(data) >= min(READ_CHUNK, MAX_JSON_LINE_BYTES + 1):
                self._offset += len(data)
                self._skipping = True
            return restarted
        before = self.progress.rows
        for line in data[: end + 1].split(b"\n")[:-1]:
            if self._skipping:  # the end of an overlong line
                self._skipping = False
                continue
            row = _row(line)
            if row is not None:
                self.progress.add(row)
        self._offset += end + 1
        return restarted or self.progress.rows != before


def _row(line: bytes) -> dict[str, Any] | None:
    if not line.strip() or len(line) > MAX_JSON_LINE_BYTES:
        return None
    try:
        row = parse_json_text(line, "metrics.jsonl", None)
    except EpisodeError:
        return None
    if not isinstance(row, dict) or not isinstance(row.get("kind"), str):
        return None
    steps = row.get("env_steps")
    if not isinstance(steps, int) or isinstance(steps, bool) or steps < 0:
        return None
    return row


__all__ = ["READ_CHUNK", "MetricsFollower"]

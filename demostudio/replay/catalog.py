"""The episodes a viewer was opened on: one entry per file, with its summary or the error
that stops it from opening (the rest of the folder still works)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from demostudio.episode import EpisodeError, EpisodeSummary, read_summary, scan


@dataclass(frozen=True)
class Entry:
    path: Path
    summary: EpisodeSummary | None
    error: str | None

    @property
    def ok(self) -> bool:
        return self.summary is not None


class Catalog:
    """An ordered list of entries; ``index`` is the current one (-1 when empty)."""

    def __init__(self, paths: list[Path]):
        self.roots = [Path(p) for p in paths]
        self.entries: list[Entry] = []
        for e in scan(self.roots):
            error = e.error
            if e.partial:
                error = f"unfinished recording ({error or 'partial'}); run demostudio recover"
            self.entries.append(Entry(e.path, e.summary, error if e.summary is None else None))
        self.index = 0 if self.entries else -1
        self.version = 0
        """Bumped whenever an entry changes, so views know to redraw."""

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def current(self) -> Entry | None:
        return self.entries[self.index] if self.entries else None

    def select(self, index: int) -> bool:
        """Make ``index`` (clamped) current; True when that changed the current entry."""
        if not self.entries:
            return False
        index = min(max(index, 0), len(self.entries) - 1)
        changed = index != self.index
        self.index = index
        return changed

    def mark_error(self, index: int, error: str) -> None:
        self.entries[index] = replace(self.entries[index], summary=None, error=error)
        self.version += 1

    def reload(self, index: int) -> None:
        """Re-read an entry's summary (after its tags or notes changed)."""
        path = self.entries[index].path
        try:
            self.entries[index] = Entry(path, read_summary(path), None)
            self.version += 1
        except (EpisodeError, OSError) as exc:
            self.mark_error(index, str(exc))

    def remove(self, index: int) -> Entry:
        entry = self.entries.pop(index)
        self.version += 1
        if not self.entries:
            self.index = -1
        else:
            self.index = min(self.index, len(self.entries) - 1)
        return entry

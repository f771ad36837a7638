"""The episodes a viewer was opened on: one entry per file, with its summary or the error
that stops it from opening (the rest of the folder still works)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from demostudio.episode import (
    EpisodeError,
    EpisodeSummary,
    find_episodes,
    find_partials,
    read_summary,
    scan,
)

PARTIAL_ERROR = (
    "unfinished recording: still being recorded, or left by a crash (run demostudio recover)"
)


def _recorded(entry: Entry) -> float:
    """When an episode was recorded, as a Unix time."""
    try:
        return datetime.fromisoformat(entry.summary.recorded_at).timestamp()
    except (ValueError, TypeError, OverflowError):
        try:
            return entry.path.stat().st_mtime
        except OSError:
            return 0.0


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
        self.entries: list[Entry] = self._read(self.roots)
        self.index = self.newest()
        self.version = 0
        """Bumped whenever an entry changes, so views know to redraw."""

    @staticmethod
    def _read(paths: list[Path]) -> list[Entry]:
        """Entries for episode files and folders (a folder's ``.partial`` files included)."""
        out = []
        for e in scan(paths):
            error = PARTIAL_ERROR if e.partial else e.error
            out.append(Entry(e.path, e.summary, error if e.summary is None else None))
        return out

    def _on_disk(self) -> tuple[set[Path], set[Path]]:
        """(episode files, ``.partial`` files) now under the roots that still exist."""
        roots = [r for r in self.roots if r.exists()]
        partials = {p for r in roots if r.is_dir() for p in find_partials(r)}
        return set(find_episodes(roots)), partials

    def refresh(self, reread_errors: bool = False) -> tuple[int, int]:
        """Pick up files added under the roots and drop files that are gone (a finished
        recording replaces its ``.partial`` row); ``reread_errors`` also re-reads the files
        that failed to open. The current entry stays current while it exists.
        Returns (added, removed)."""
        episodes, partials = self._on_disk()
        known = {e.path for e in self.entries}
        retry = {e.path for e in self.entries if not e.ok} & episodes if reread_errors else set()
        gone = known - episodes - partials
        new_episodes, new_partials = episodes - known, partials - known
        if not (gone or new_episodes or new_partials or retry):
            return 0, 0
        current = self.current.path if self.current else None
        by_path = {e.path: e for e in self.entries if e.path not in gone}
        by_path.update((e.path, e) for e in self._read(sorted(new_episodes | retry)))
        by_path.update((p, Entry(p, None, PARTIAL_ERROR)) for p in new_partials)
        # as at opening: episode files by path, then the unfinished ones
        self.entries = [by_path[p] for p in sorted(by_path, key=lambda p: (p in partials, p))]
        paths = [e.path for e in self.entries]
        if current in paths:
            self.index = paths.index(current)
        else:
            self.index = min(max(self.index, 0), len(self.entries) - 1)
        self.version += 1
        return len(new_episodes) + len(new_partials), len(gone)

    def newest(self) -> int:
        """The index of the most recently recorded readable episode (by its ``recorded_at``,
        the file's time when that does not parse); the last entry when none is readable, -1
        when there are none."""
        if not self.entries:
            return -1
        best, when = len(self.entries) - 1, None
        for i, e in enumerate(self.entries):
            if not e.ok:
                continue
            t = _recorded(e)
            if when is None or t >= when:
                best, when = i, t
        return best

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

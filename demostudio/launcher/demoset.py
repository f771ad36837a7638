"""The recordings a training run of a game would use: episodes, steps, players and the
person's share, with the files left out and why (tagged ``bad``, flagged by the same checks
as ``demostudio quality``, or unreadable).

Reading a folder opens every file (the quality checks read its actions), so
:class:`DemoScan` does it in a background thread."""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

LEAVE_OUT_FLAGS = ("return-low", "length-short", "duplicate", "diverges")
"""The ``quality`` flags whose fix is ``demostudio tag FILE --add bad``: such a file is left
out of training unless the user includes it (idle runs and long episodes are kept: trimming
fixes them, and their steps are still demonstrations)."""
BAD_TAG = "bad"


class DemoFile(NamedTuple):
    path: Path
    player: str = ""
    length: int = 0
    human_share: float = 0.0
    left_out: str = ""
    """Why it is left out unless included ("" = used): "tagged bad", "flagged duplicate"."""
    error: str = ""
    """Why it cannot be read (never used)."""


class DemoTotals(NamedTuple):
    episodes: int
    steps: int
    players: dict[str, int]
    """Episodes per player ("" for files that name none)."""
    person_share: float
    """The share of the steps a person took (the rest an agent's, in take-over files)."""


@dataclass(frozen=True)
class DemoSet:
    folder: Path
    files: tuple[DemoFile, ...]

    def used(self, include_left_out: bool = False) -> list[DemoFile]:
        return [f for f in self.files if not f.error and (include_left_out or not f.left_out)]

    @property
    def left_out(self) -> list[DemoFile]:
        return [f for f in self.files if f.left_out and not f.error]

    @property
    def unreadable(self) -> list[DemoFile]:
        return [f for f in self.files if f.error]

    def totals(self, include_left_out: bool = False) -> DemoTotals:
        used = self.used(include_left_out)
        steps = sum(f.length for f in used)
        person = sum(f.human_share * f.length for f in used)
        return DemoTotals(
            len(used),
            steps,
            dict(Counter(f.player for f in used).most_common()),
            person / steps if steps else 0.0,
        )

    def demo_paths(self, include_left_out: bool = False) -> list[Path]:
        """What ``--demos`` gets: the folder when every file in it is used, else the files."""
        used = self.used(include_left_out)
        if used and len(used) == len(self.files):
            return [self.folder]
        return [f.path for f in used]


def read_demo_set(folder: Path) -> DemoSet:
    """Every episode under ``folder`` with what the launcher shows of it; an empty set when
    the folder does not exist."""
    from demostudio.episode import EpisodeError, read_summary
    from demostudio.episode.quality import assess

    folder = Path(folder)
    if not folder.is_dir():
        return DemoSet(folder, ())
    files = []
    for q in assess(folder):
        if q.error is not None:
            files.append(DemoFile(q.path, error=q.error))
            continue
        try:
            summary = read_summary(q.path)
        except (EpisodeError, OSError) as exc:
            files.append(DemoFile(q.path, error=str(exc)))
            continue
        flagged = [f.kind for f in q.flags if f.kind in LEAVE_OUT_FLAGS]
        why = "tagged bad" if BAD_TAG in summary.tags else ""
        if not why and flagged:
            why = "flagged " + ", ".join(flagged)
        files.append(DemoFile(q.path, summary.player, q.length, q.human_share, why))
    return DemoSet(folder, tuple(files))


class DemoScan:
    """:func:`read_demo_set` in a background thread; ``result`` is None until it is done."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.result: DemoSet | None = None
        self.error = ""
        self._thread = threading.Thread(target=self._run, name="demo-scan", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self.result = read_demo_set(self.folder)
        except (OSError, ValueError) as exc:  # a folder that vanished or cannot be listed
            self.error = f"{self.folder}: {exc}"
            self.result = DemoSet(self.folder, ())

    def wait(self, timeout: float | None = None) -> DemoSet | None:
        self._thread.join(timeout)
        return self.result


__all__ = ["LEAVE_OUT_FLAGS", "DemoFile", "DemoScan", "DemoSet", "DemoTotals", "read_demo_set"]

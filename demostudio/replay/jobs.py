"""Work the viewer runs off the UI thread (verification, export), with progress the window
polls each frame."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any


class BackgroundJob:
    """Runs ``work(progress)`` on a daemon thread; ``progress(done, total)`` updates
    :attr:`done` / :attr:`total`. Afterwards :attr:`result` or :attr:`error` is set."""

    def __init__(self, label: str, path: Path, work: Callable[[Callable[[int, int], None]], Any]):
        self.label = label
        self.path = path
        """The episode the job reads (tag edits and deletion wait for it)."""
        self.done = 0
        self.total = 0
        self.result: Any = None
        self.error: BaseException | None = None
        self._finished = threading.Event()
        self._work = work
        self._thread = threading.Thread(target=self._run, name=f"viewer-{label}", daemon=True)
        self._thread.start()

    def _progress(self, done: int, total: int) -> None:
        self.done, self.total = done, total

    def _run(self) -> None:
        try:
            self.result = self._work(self._progress)
        except Exception as exc:  # shown in the window instead of killing the thread silently
            self.error = exc
        finally:
            self._finished.set()

    @property
    def finished(self) -> bool:
        return self._finished.is_set()

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 0.0

    def wait(self, timeout: float | None = None) -> bool:
        return self._finished.wait(timeout)

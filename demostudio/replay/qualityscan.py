"""The quality facts and flags of the episodes in the viewer's list (the same as
``demostudio quality`` prints), computed off the UI thread and kept per file version, so a
rescan only reads the files that are new or changed."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from demostudio.episode.quality import EpisodeQuality, episode_quality, flag_episodes

FileKey = tuple[Path, int, int]
"""(path, mtime in ns, size): a file's version."""


def _key(path: Path) -> FileKey | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return path, st.st_mtime_ns, st.st_size


class QualityScan:
    """``update(paths)`` starts (re)computing when the files changed; ``results`` maps each
    path to its :class:`EpisodeQuality` once done; ``version`` is bumped with each new result.
    ``lock`` is held while a file is open here: hold it to write a file."""

    def __init__(self) -> None:
        self.results: dict[Path, EpisodeQuality] = {}
        self.version = 0
        self.lock = threading.Lock()
        self._cache: dict[FileKey, EpisodeQuality] = {}
        self._wanted: tuple[FileKey, ...] = ()
        self._thread: threading.Thread | None = None
        self.done = 0
        self.total = 0

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def update(self, paths: list[Path]) -> None:
        keys = tuple(k for k in map(_key, paths) if k is not None)
        if keys == self._wanted or self.running:
            return
        self._wanted = keys
        self._thread = threading.Thread(
            target=self._run, args=(keys,), name="viewer-quality", daemon=True
        )
        self._thread.start()

    def _run(self, keys: tuple[FileKey, ...]) -> None:
        self.done, self.total = 0, len(keys)
        items = []
        for key in keys:
            q = self._cache.get(key)
            if q is None:
                with self.lock:
                    q = episode_quality(key[0])
                self._cache[key] = q
            items.append(q)
            self.done += 1
        self._cache = {k: self._cache[k] for k in keys}
        self.results = {q.path: q for q in flag_episodes(items)}
        self.version += 1

    def wait(self, timeout: float | None = None) -> bool:
        if self._thread is not None:
            self._thread.join(timeout)
        return not self.running

    def get(self, path: Path) -> EpisodeQuality | None:
        return self.results.get(path)

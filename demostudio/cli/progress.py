"""Progress bars of the CLI commands that are drawn only once there is progress to show.

A bar opened before its input is known good leaves a fragment (``0step [00:00, ?step/s]``)
above the error line; :class:`LazyBar` opens its tqdm bar at the first progress report, so a
refused input gets its one line and nothing else."""

from __future__ import annotations

import sys
from typing import Any


class LazyBar:
    """``progress(done, total)`` for a long task; the bar appears on its first call. A
    context manager: the bar (if any) is closed on exit, before an error is printed."""

    def __init__(self, disable: bool = False, **tqdm_kwargs: Any) -> None:
        self.disable = disable
        self.kwargs = tqdm_kwargs
        self.bar = None

    def __call__(self, done: int, total: int) -> None:
        if self.disable:
            return
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=total, file=sys.stderr, **self.kwargs)
        self.bar.total = total
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self) -> LazyBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

"""Run logging: metrics.jsonl (one JSON object per line), TensorBoard scalars, config.json."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from demostudio.episode import EpisodeError
from demostudio.episode.hostile import not_a_regular_file
from demostudio.episode.jsonfile import read_json_lines

METRICS_FILE = "metrics.jsonl"


RUN_FILES = ("config.json", METRICS_FILE)
"""The files a run writes in its folder."""
RUN_FOLDERS = ("checkpoints", "tb")
"""The folders a run writes in its folder."""


def run_folder_problem(run_dir: Path) -> str | None:
    """Why the run folder ``run_dir`` cannot be written to, or None: it is a file, or one of
    :data:`RUN_FILES` and :data:`RUN_FOLDERS` is a link (nothing is written, appended or
    pruned through a link out of the folder), a FIFO or device (appending to it would wait
    forever), or a folder where a file goes."""
    if run_dir.exists() and not run_dir.is_dir():
        return f"{run_dir}: expected a run folder, got a file"
    for name in (*RUN_FILES, *RUN_FOLDERS):
        p = run_dir / name
        is_file = name in RUN_FILES
        if p.is_symlink():
            kind = "file" if is_file else "folder"
            return f"{p}: expected a {kind} of this run, got a link (never written through)"
        if not p.exists():
            continue
        if is_file:
            problem = not_a_regular_file(p, f"the run's {name}")
            if problem is not None:
                return f"{p}: {problem}"
        elif not p.is_dir():
            return f"{p}: expected the run's {name} folder, got a file"
    return None


class RunLogger:
    def __init__(self, run_dir: Path, tensorboard: bool = True):
        run_dir.mkdir(parents=True, exist_ok=True)
        self.path = run_dir / METRICS_FILE
        self._file = self.path.open("a", encoding="utf-8")
        self._tb = None
        if tensorboard:
            from torch.utils.tensorboard import SummaryWriter

            self._tb = SummaryWriter(str(run_dir / "tb"))

    def log(self, kind: str, env_steps: int, tb_step: int | None = None, **values: Any) -> None:
        """One metrics.jsonl row; TensorBoard's x axis is ``tb_step`` (default env steps)."""
        clean = {k: v for k, v in values.items() if not (isinstance(v, float) and math.isnan(v))}
        self._file.write(json.dumps({"kind": kind, "env_steps": env_steps, **clean}) + "\n")
        self._file.flush()
        if self._tb is not None:
            for k, v in clean.items():
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    self._tb.add_scalar(f"{kind}/{k}", v, env_steps if tb_step is None else tb_step)

    def close(self) -> None:
        self._file.close()
        if self._tb is not None:
            self._tb.close()


def read_metrics(run_dir: Path, skip_bad: bool = False) -> list[dict[str, Any]]:
    """Every row of a run's metrics.jsonl (:func:`iter_metrics`)."""
    return list(iter_metrics(run_dir, skip_bad))


def iter_metrics(run_dir: Path, skip_bad: bool = False) -> Iterator[dict[str, Any]]:
    """The rows of a run's metrics.jsonl one at a time (a caller keeping only what it needs
    holds little of a large file), read as hostile input (a regular file of bounded size and
    line length: :func:`demostudio.episode.jsonfile.read_json_lines`); every row is a JSON
    object with a text ``kind`` and a whole-number ``env_steps``, as the logger writes them.
    A ValueError names the file and line if one is bad (``skip_bad``: such lines, e.g. the one
    a live run is writing, are left out instead)."""
    path = Path(run_dir) / METRICS_FILE
    if not os.path.lexists(path):
        raise FileNotFoundError(
            f"{path}: expected a metrics file of a training run, got no such file"
        )
    for n, row, error in read_json_lines(path, "a metrics file of a training run"):
        if error is None:
            error = _row_problem(path, n, row)
        if error is not None:
            if skip_bad:
                continue
            raise error
        yield row


def _row_problem(path: Path, n: int, row: Any) -> EpisodeError | None:
    where = f"line {n}"
    if not isinstance(row, dict):
        return EpisodeError(path, where, f"expected a JSON object, got {type(row).__name__}")
    if not isinstance(row.get("kind"), str):
        return EpisodeError(path, f"{where}: kind", f"expected text, got {row.get('kind')!r:.60}")
    steps = row.get("env_steps")
    if not isinstance(steps, int) or isinstance(steps, bool) or steps < 0:
        return EpisodeError(
            path, f"{where}: env_steps", f"expected a whole number >= 0, got {steps!r:.60}"
        )
    return None


__all__ = [
    "METRICS_FILE",
    "RUN_FILES",
    "RUN_FOLDERS",
    "RunLogger",
    "iter_metrics",
    "read_metrics",
    "run_folder_problem",
]

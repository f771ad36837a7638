"""Run logging: metrics.jsonl (one JSON object per line), TensorBoard scalars, config.json."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from demostudio.episode import EpisodeError
from demostudio.episode.jsonfile import read_json_lines

METRICS_FILE = "metrics.jsonl"


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
    """Rows of a run's metrics.jsonl, read as hostile input (a regular file of bounded size
    and line length: :func:`demostudio.episode.jsonfile.read_json_lines`); every row is a
    JSON object with a text ``kind`` and a whole-number ``env_steps``, as the logger writes
    them. A ValueError names the file and line if one is bad (``skip_bad``: such lines, e.g.
    the one a live run is writing, are left out instead)."""
    path = Path(run_dir) / METRICS_FILE
    if not path.exists() and not path.is_symlink():
        raise FileNotFoundError(
            f"{path}: expected a metrics file of a training run, got no such file"
        )
    rows = []
    for n, row, error in read_json_lines(path, "a metrics file of a training run"):
        if error is None:
            error = _row_problem(path, n, row)
        if error is not None:
            if skip_bad:
                continue
            raise error
        rows.append(row)
    return rows


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


__all__ = ["METRICS_FILE", "RunLogger", "read_metrics"]

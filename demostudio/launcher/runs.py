"""Training runs read from their folders into the rows of the launcher's runs list.

A run's state lives in its folder alone, so closing the launcher never loses a run and
reopening it shows every run again, whoever started it:

* ``config.json`` (the algorithm, the env, the budget, the demos) and ``metrics.jsonl`` (its
  rows: evaluations, training windows, and the ``interrupted``, ``failed`` and ``resume``
  rows the run shell writes when a run stops or goes on), ``checkpoints/*.pt``;
* ``process.json``, written by the launcher when it starts a process on the run (train,
  resume or coach): its pid and exact command line, when it started, whether the user asked
  it to stop, and its exit code once the launcher saw it end. A pid is only taken as the
  run's while that pid still runs that command line (a reused pid is another program);
* ``console.log``: what the process printed (the one-line error of a run that failed).

Status: ``starting`` and ``running`` (its process runs; no metrics yet, then some),
``stopping`` (asked to stop, still saving), ``finished`` (``checkpoints/final.pt`` written
after its last row), ``stopped`` (ended by the user's stop: Ctrl-C's final checkpoint),
``interrupted`` (Ctrl-C elsewhere, or killed), ``failed`` (with its one-line reason). A run
started from the command line has no ``process.json``: it is running while its metrics.jsonl
grows (a row within :data:`STALE_SECONDS`) and has no final row.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from demostudio.episode import EpisodeError, env_folder_name
from demostudio.episode.hostile import not_a_regular_file
from demostudio.episode.jsonfile import read_json_file
from demostudio.launcher.follow import MetricsFollower
from demostudio.launcher.processes import (
    PROCESS_FILE,
    ProcessNote,
    process_alive,
    read_process_note,
)
from demostudio.launcher.progress import Clock, Progress

CONSOLE_FILE = "console.log"
METRICS_FILE = "metrics.jsonl"
CONFIG_FILE = "config.json"
FINAL_CHECKPOINT = "final.pt"
STALE_SECONDS = 120.0
"""A run with no process the launcher knows of counts as running while its metrics.jsonl got
a row this recently (a window of 1,000 env steps takes seconds to a minute)."""
MAX_CONFIG_BYTES = 4 * 1024 * 1024
"""A run's config.json is a few KB (its demo list grows with the files given)."""
CONSOLE_TAIL_BYTES = 64 * 1024
"""How much of the end of console.log is read for the error line."""

ACTIVE = ("starting", "running", "stopping")


@dataclass(frozen=True)
class RunRow:
    """One run as the runs list shows it."""

    path: Path
    algo: str
    env_id: str
    status: str
    reason: str
    """One line: why it failed, where it stopped, or "" when running or finished."""
    progress: Progress
    budget: int | None
    """--total-env-steps (or BC's --max-updates) from its config."""
    demos: tuple[str, ...]
    """The demo files and folders it trained on (its config's --demos)."""
    process: ProcessNote | None
    started: float
    """When it was created (sorting: newest first)."""
    checkpoint: Path | None
    """Its newest checkpoint file (what watch and evaluate play), None before the first."""

    @property
    def clock(self) -> Clock:
        return self.progress.clock

    @property
    def done(self) -> int:
        """How far along its clock it is (env steps, or updates for BC)."""
        p = self.progress
        return p.env_steps if p.clock == "env_steps" else p.updates

    @property
    def active(self) -> bool:
        return self.status in ACTIVE

    @property
    def name(self) -> str:
        return self.path.name


class _Config(NamedTuple):
    signature: tuple[int, int] | None
    doc: dict[str, Any]


class RunReader:
    """Reads run folders: a run's config again only when it changed, its metrics.jsonl only
    as far as it grew (:class:`~demostudio.launcher.follow.MetricsFollower`), so a live run's
    curve follows its file at the cost of its new rows."""

    def __init__(self) -> None:
        self._configs: dict[Path, _Config] = {}
        self._metrics: dict[Path, MetricsFollower] = {}

    def read(self, run_dir: Path, now: float | None = None) -> RunRow:
        run_dir = Path(run_dir)
        now = time.time() if now is None else now
        config_path = run_dir / CONFIG_FILE
        config = self._config(config_path)
        clock: Clock = "updates" if "max_updates" in config else "env_steps"
        follower = self._metrics.get(run_dir)
        if follower is None:
            follower = self._metrics[run_dir] = MetricsFollower(run_dir / METRICS_FILE, clock)
        elif follower.clock != clock:
            follower.restart(clock)
        follower.update()
        progress = follower.progress
        note = read_process_note(run_dir)
        status, reason = run_status(run_dir, note, progress, now)
        budget = config.get("total_env_steps", config.get("max_updates"))
        demos = config.get("demos") if isinstance(config.get("demos"), list) else []
        started = note.started if note is not None else _mtime(config_path) or _mtime(run_dir)
        return RunRow(
            path=run_dir,
            algo=str(config.get("algo") or _algo_from_command(note) or "?"),
            env_id=str(config.get("env") or ""),
            status=status,
            reason=reason,
            progress=progress,
            budget=budget if isinstance(budget, int) and not isinstance(budget, bool) else None,
            demos=tuple(str(d) for d in demos if isinstance(d, str)),
            process=note,
            started=started or 0.0,
            checkpoint=newest_checkpoint(run_dir),
        )

    def _config(self, path: Path) -> dict[str, Any]:
        signature = _stat_key(path)
        cached = self._configs.get(path)
        if cached is None or cached.signature != signature:
            cached = self._configs[path] = _Config(signature, _read_config(path))
        return cached.doc


def _stat_key(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


def _read_config(path: Path) -> dict[str, Any]:
    if not os.path.lexists(path):
        return {}
    try:
        doc = read_json_file(path, "a training run's config", MAX_CONFIG_BYTES)
    except EpisodeError:
        return {}
    return doc if isinstance(doc, dict) else {}


def _algo_from_command(note: ProcessNote | None) -> str | None:
    if note is None:
        return None
    words = list(note.command)
    for verb in ("train", "coach"):
        if verb in words and words.index(verb) + 1 < len(words):
            return words[words.index(verb) + 1]
    return None


def newest_checkpoint(run_dir: Path) -> Path | None:
    """The most recently written ``checkpoints/*.pt`` (regular files only), None if none."""
    folder = Path(run_dir) / "checkpoints"
    try:
        found = [p for p in folder.glob("*.pt") if not_a_regular_file(p, "a checkpoint") is None]
    except OSError:
        return None
    return max(found, key=lambda p: (_mtime(p) or 0.0, p.name == FINAL_CHECKPOINT), default=None)


def run_status(
    run_dir: Path, note: ProcessNote | None, progress: Progress, now: float
) -> tuple[str, str]:
    """(status, one-line reason) of a run from its folder (see the module's docstring)."""
    metrics = run_dir / METRICS_FILE
    has_metrics = os.path.lexists(metrics)
    if note is not None and process_alive(note.pid, note.command, note.started):
        if note.stop_requested:
            return "stopping", "saving its final checkpoint"
        if note.kind == "coach":
            return "running", "in the coach window"
        return ("running" if progress.rows else "starting"), ""
    stop = progress.stop
    stopped_by_user = note is not None and note.stop_requested
    if stop is not None and stop["kind"] == "failed":
        return "failed", _one_line(str(stop.get("error") or "the run failed"))
    if stop is not None:
        how = "stopped" if stopped_by_user else "interrupted"
        return how, "final checkpoint saved; Resume continues it"
    final = _mtime(run_dir / "checkpoints" / FINAL_CHECKPOINT)
    changed = _mtime(metrics) if has_metrics else None
    if final is not None and (changed is None or final >= changed):
        return "finished", ""
    if note is None and changed is not None and now - changed < STALE_SECONDS:
        return "running", "started outside the launcher"
    error = console_error(run_dir)
    if (note is not None and note.exit_code not in (None, 0, 130)) or error:
        code = "" if note is None or note.exit_code is None else f"exit code {note.exit_code}"
        return "failed", error or code or "the process ended with an error"
    if stopped_by_user:
        return "stopped", "before its first checkpoint"
    return "interrupted", "its process ended without a final checkpoint (killed?)"


ERROR_MARK = "demostudio: error: "


def console_error(run_dir: Path) -> str:
    """The last ``demostudio: error: ...`` line of ``RUN/console.log`` ("" if none)."""
    text = console_tail(Path(run_dir) / CONSOLE_FILE)
    for line in reversed(text.splitlines()):
        if ERROR_MARK in line:
            return _one_line(line.split(ERROR_MARK, 1)[1])
    return ""


def console_tail(path: Path, limit: int = CONSOLE_TAIL_BYTES) -> str:
    """The last ``limit`` bytes of a log as text (progress bars' carriage returns as line
    ends); "" when it cannot be read as a regular file."""
    if not os.path.lexists(path) or not_a_regular_file(path, "a log") is not None:
        return ""
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, os.fstat(fh.fileno()).st_size - limit))
            raw = fh.read(limit)
    except OSError:
        return ""
    return raw.decode("utf-8", "replace").replace("\r", "\n")


def _one_line(text: str, most: int = 300) -> str:
    line = " ".join(text.split())
    return line if len(line) <= most else line[: most - 1] + "…"


def run_folders(env_id: str, roots: list[Path]) -> list[Path]:
    """The run folders of ``env_id`` under ``roots``: each root's ``<env folder>/`` (every
    run there is of that env, the launcher's layout) and the root itself (``runs/``, where
    ``demostudio train`` puts runs by default: only those whose config names ``env_id``)."""
    found: dict[Path, None] = {}
    for root in roots:
        per_env = Path(root) / env_folder_name(env_id)
        for candidate in _children(per_env):
            found[candidate] = None
        for candidate in _children(Path(root)):
            if candidate != per_env and _read_config(candidate / CONFIG_FILE).get("env") == env_id:
                found[candidate] = None
    return list(found)


def _children(folder: Path) -> list[Path]:
    try:
        entries = sorted(folder.iterdir()) if folder.is_dir() else []
    except OSError:
        return []
    return [
        p
        for p in entries
        if p.is_dir()
        and not p.is_symlink()
        and any(os.path.lexists(p / f) for f in (CONFIG_FILE, PROCESS_FILE))
    ]


__all__ = [
    "CONSOLE_FILE",
    "RunReader",
    "RunRow",
    "console_error",
    "console_tail",
    "newest_checkpoint",
    "run_folders",
    "run_status",
]

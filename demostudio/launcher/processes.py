"""``RUN/process.json``: the process the launcher started on a run (train, resume or coach),
so that any later launcher can tell a run that is still going from one whose process has
ended without a word (killed, or the machine went down): the pid counts only while it still
runs that exact command line, since a pid is reused by other programs."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import NamedTuple

from demostudio.episode import EpisodeError
from demostudio.episode.jsonfile import read_json_file

PROCESS_FILE = "process.json"
MAX_PROCESS_BYTES = 1024 * 1024
"""A process file holds a command line (its demo list can be long); more is not one."""


class ProcessNote(NamedTuple):
    """``RUN/process.json``: the process the launcher started on the run."""

    pid: int
    command: tuple[str, ...]
    """The exact argv it was started with (what /proc/PID/cmdline must still show)."""
    started: float
    """Unix time it was started."""
    kind: str = "train"
    """``train`` (a new run or a resume) or ``coach``."""
    stop_requested: bool = False
    """The user pressed stop: the run's end is "stopped", not "interrupted"."""
    exit_code: int | None = None
    """Set once the launcher saw the process end (None: still running, or it ended while
    no launcher watched)."""


def write_process_note(run_dir: Path, note: ProcessNote) -> None:
    """Replace ``RUN/process.json`` (written whole, then renamed: a reader never sees half)."""
    path = Path(run_dir) / PROCESS_FILE
    tmp = path.with_name(PROCESS_FILE + ".tmp")
    doc = {**note._asdict(), "command": list(note.command)}
    tmp.unlink(missing_ok=True)  # a link left there is removed, never written through
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(doc, indent=2))
    os.replace(tmp, path)


def read_process_note(run_dir: Path) -> ProcessNote | None:
    """``RUN/process.json``, or None when there is none or it is not one (a hostile or
    damaged file is ignored: the run's other files still tell its state)."""
    path = Path(run_dir) / PROCESS_FILE
    if not os.path.lexists(path):
        return None
    try:
        doc = read_json_file(path, "the launcher's process file", MAX_PROCESS_BYTES)
    except EpisodeError:
        return None
    if not isinstance(doc, dict):
        return None
    pid, command, started = doc.get("pid"), doc.get("command"), doc.get("started")
    exit_code = doc.get("exit_code")
    if (
        not _int(pid)
        or pid <= 0
        or not isinstance(command, list)
        or not command
        or not all(isinstance(c, str) for c in command)
        or not isinstance(started, (int, float))
        or not (exit_code is None or _int(exit_code))
    ):
        return None
    kind = doc.get("kind") if doc.get("kind") in ("train", "coach") else "train"
    return ProcessNote(
        pid, tuple(command), float(started), kind, doc.get("stop_requested") is True, exit_code
    )


def _int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def process_alive(pid: int, command: tuple[str, ...], started: float | None = None) -> bool:
    """The process ``pid`` runs and is the one started with ``command`` at ``started`` (on
    Linux, from /proc: its command line; while it is still starting, and has none yet, its
    start time within :data:`START_SLACK` seconds; never a zombie). Elsewhere, that the pid
    exists."""
    proc = Path("/proc")
    if not (proc / "self").exists():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    try:
        with open(proc / str(pid) / "cmdline", "rb") as fh:
            raw = fh.read(1024 * 1024)
        stat = (proc / str(pid) / "stat").read_text(errors="replace")
    except OSError:
        return False
    fields = stat[stat.rfind(")") + 2 :].split()
    if not fields or fields[0] in ("Z", "X"):  # ended, not yet reaped
        return False
    if raw:
        return raw.rstrip(b"\0").split(b"\0") == [os.fsencode(c) for c in command]
    begun = _start_time(fields)  # between fork and exec a process shows no command line
    return started is not None and begun is not None and abs(begun - started) < START_SLACK


START_SLACK = 5.0
"""Seconds between a process's start and the time noted for it that still make it the same."""


def _start_time(stat_fields: list[str]) -> float | None:
    """Unix time a process started, from the fields of /proc/PID/stat after its name."""
    try:
        ticks = int(stat_fields[19])
        with open("/proc/stat") as fh:
            boot = next(int(line.split()[1]) for line in fh if line.startswith("btime "))
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


__all__ = [
    "PROCESS_FILE",
    "START_SLACK",
    "ProcessNote",
    "process_alive",
    "read_process_note",
    "write_process_note",
]

"""The processes the Train panel starts: each ``demostudio`` command in a process of its own,
in a new session (closing the launcher, or its terminal, does not end a run), its output in a
log file; a run's process is noted in ``RUN/process.json`` so any later launcher knows it.

Stopping a run is Ctrl-C's signal, SIGINT, sent to the run's process group: the run shell
saves ``checkpoints/final.pt`` marked interrupted and writes its ``interrupted`` row, as when
the user presses Ctrl-C in a terminal. ``process.json`` records that the user asked, which
is what makes the run "stopped" rather than "interrupted"."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from demostudio.episode.hostile import not_a_regular_file
from demostudio.launcher.commands import argv, shown
from demostudio.launcher.processes import (
    ProcessNote,
    process_alive,
    read_process_note,
    write_process_note,
)

RUN_KINDS = ("train", "coach")
"""Jobs that are a run's own process (noted in its process.json)."""


@dataclass
class Job:
    kind: str
    """``train``, ``coach``, ``watch``, ``evaluate``, ``calibrate`` or ``open``."""
    words: list[str]
    """The ``demostudio`` words (or the whole command for ``open``)."""
    popen: subprocess.Popen
    log: Path
    run_dir: Path | None
    started: float
    exit_code: int | None = None

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def running(self) -> bool:
        return self.exit_code is None

    @property
    def command(self) -> str:
        return shown(self.words) if self.kind != "open" else " ".join(self.words)


class Jobs:
    """The processes this launcher started, polled each frame (which also reaps them)."""

    def __init__(self) -> None:
        self.jobs: list[Job] = []

    def spawn(
        self,
        kind: str,
        words: Sequence[str],
        log: Path,
        run_dir: Path | None = None,
        demostudio: bool = True,
    ) -> Job:
        """Start ``demostudio WORDS`` (or, with ``demostudio`` False, the command ``WORDS``)
        with its output appended to ``log``. OSError when it cannot start."""
        words = [str(w) for w in words]
        args = argv(words) if demostudio else words
        log.parent.mkdir(parents=True, exist_ok=True)
        if log.is_symlink() or (log.exists() and not_a_regular_file(log, "a log") is not None):
            raise OSError(
                f"{log}: expected a log file, got a link or a special file (never written through)"
            )
        with open(log, "ab") as out:
            head = shown(words) if demostudio else " ".join(words)
            out.write(f"\n$ {head}    # {time.strftime('%Y-%m-%d %H:%M:%S')}\n".encode())
            out.flush()
            popen = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        job = Job(kind, words, popen, log, run_dir, time.time())
        if kind in RUN_KINDS and run_dir is not None:
            write_process_note(run_dir, ProcessNote(popen.pid, tuple(args), job.started, kind))
        self.jobs.append(job)
        return job

    def poll(self) -> list[Job]:
        """The jobs that ended since the last poll (their exit codes set; a run's is written
        into its process.json)."""
        ended = []
        for job in self.jobs:
            if job.exit_code is not None:
                continue
            code = job.popen.poll()
            if code is None:
                continue
            job.exit_code = code
            ended.append(job)
            if job.kind in RUN_KINDS and job.run_dir is not None:
                note = read_process_note(job.run_dir)
                if note is not None and note.pid == job.pid:
                    write_process_note(job.run_dir, note._replace(exit_code=code))
        return ended

    def running(self, kind: str | None = None) -> list[Job]:
        return [j for j in self.jobs if j.running and (kind is None or j.kind == kind)]

    def wait(self, job: Job, timeout: float) -> int | None:
        """Wait up to ``timeout`` seconds for ``job`` to end; its exit code or None."""
        try:
            job.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        self.poll()
        return job.exit_code


def stop_run(run_dir: Path) -> str:
    """Ask the run's process to stop as Ctrl-C does; returns "" when asked, else why not."""
    note = read_process_note(run_dir)
    if note is None:
        return f"{run_dir} was not started by the launcher: stop it with Ctrl-C in its terminal"
    if not process_alive(note.pid, note.command, note.started):
        return f"{run_dir} is not running"
    if note.stop_requested:  # a second Ctrl-C would cut the final checkpoint's save short
        return f"{run_dir.name} is already stopping: it is saving its final checkpoint"
    write_process_note(run_dir, note._replace(stop_requested=True))
    return interrupt(note.pid)


def interrupt(pid: int) -> str:
    """SIGINT to the process group ``pid`` leads (a job's: each has its own session)."""
    try:
        os.killpg(pid, signal.SIGINT)
    except ProcessLookupError:
        return f"process {pid} has already ended"
    except PermissionError as exc:
        return f"cannot signal process {pid}: {exc.strerror}"
    return ""


__all__ = ["RUN_KINDS", "Job", "Jobs", "interrupt", "stop_run"]

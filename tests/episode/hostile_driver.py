"""Runs the library commands on crafted hostile files, in a process of its own with bounded
address space and a watchdog, and writes one JSON line per command to a results file.

Usage: ``python hostile_driver.py COMMANDS.json RESULTS.jsonl FIRST`` (see test_hostile.py):
runs the commands from index FIRST on. Each
command runs in this process through ``demostudio.cli.main`` (as the console script does), so
a hang or an allocation of gigabytes is caught here: the watchdog ends the process (the test
then sees a "start" line without its result), and RLIMIT_AS makes a big allocation fail.
"""

from __future__ import annotations

import contextlib
import faulthandler
import io
import json
import resource
import sys
import time
import traceback
from pathlib import Path

ADDRESS_SPACE = 1536 * 1024**2  # the interpreter with gymnasium, h5py and pygame peaks near 300 MB
COMMAND_SECONDS = 10


def _peak_rss_reset() -> None:
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def _peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _train_load(folder: str) -> int:
    """What ``train --demos FOLDER`` does with the files (agents/core/demos.py's load_demos,
    without torch): each file's summary, then each file loaded; one line per file here."""
    from demostudio.episode import EpisodeError, find_episodes, load_episode, read_summary

    bad = 0
    for path in find_episodes([folder]):
        try:
            read_summary(path)
            n = len(load_episode(path))
            print(f"loaded {path} {n}")
        except EpisodeError as exc:
            print(f"demostudio: error: {exc}", file=sys.stderr)
            bad += 1
    return 2 if bad else 0


def run_one(argv: list[str]) -> dict:
    from demostudio.cli import main

    out, err = io.StringIO(), io.StringIO()
    escaped = None
    _peak_rss_reset()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = _train_load(argv[1]) if argv[0] == "train-load" else main(argv)
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 1
        except BaseException:  # what escapes is what a user would see
            rc = None
            escaped = traceback.format_exc()
    return {
        "rc": rc,
        "stdout": out.getvalue(),
        "stderr": err.getvalue(),
        "escaped": escaped,
        "seconds": time.perf_counter() - start,
        "peak_mb": _peak_rss_mb(),
    }


def main() -> None:
    commands = json.loads(Path(sys.argv[1]).read_text())
    first = int(sys.argv[3])
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    import demostudio.cli  # noqa: F401 - imported before the first watchdog starts

    with open(sys.argv[2], "a", buffering=1) as results:
        for index in range(first, len(commands)):
            head = {"index": index, **commands[index]}
            results.write(json.dumps({**head, "start": True}) + "\n")
            faulthandler.dump_traceback_later(COMMAND_SECONDS, exit=True)
            row = run_one(commands[index]["argv"])
            faulthandler.cancel_dump_traceback_later()
            results.write(json.dumps({**head, **row}) + "\n")


if __name__ == "__main__":
    main()

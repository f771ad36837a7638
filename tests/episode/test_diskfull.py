"""A full disk at any point of the episode writer: no hang, no crash, one line, nothing saved
lost, and what was being recorded recovers once there is room (faults: tests/episode/diskfull.py).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from gymnasium import spaces

from demostudio.cli import main
from demostudio.episode import (
    EpisodeError,
    EpisodeWriter,
    load_episode,
    read_summary,
    recover_folder,
    recover_partial,
    validate,
)
from demostudio.episode.journal import read_journal
from tests.episode.diskfull import NO_SPACE, DiskFull

OBS = spaces.Box(0, 255, (24, 32, 3), np.uint8)
ACT = spaces.Discrete(3)
ATTRS = {
    "env_id": "ALE/Pong-v5",
    "env_kwargs": {},
    "seed": 7,
    "recorded_at": "2026-11-23T12:00:00+00:00",
    "controller": "policy:random",
}
STEPS = 12
NO_HANG_S = 20.0


def _frame(t: int) -> np.ndarray:
    return np.full((24, 32, 3), t % 251, np.uint8)


def _writer(folder: Path, name: str, flush_interval: float = 60.0) -> EpisodeWriter:
    return EpisodeWriter(
        folder / f"{name}.h5", OBS, ACT, ATTRS, queue_size=4, flush_interval=flush_interval
    )


def _record(writer: EpisodeWriter, steps: int, pause_every: int = 0, pause: float = 0.0) -> None:
    """Reset, ``steps`` steps (pausing ``pause`` s every ``pause_every`` steps), close."""
    writer.reset(_frame(0), {"lives": 3}, _frame(0))
    for t in range(1, steps + 1):
        writer.step(t % 3, _frame(t), 1.0, False, False, {"lives": 3}, _frame(t))
        if pause_every and t % pause_every == 0:
            time.sleep(pause)
    writer.close()


def _within(seconds: float, work: Callable[[], None]) -> BaseException | None:
    """Run ``work`` on a thread; the exception it raised (None if none). Fails the test if it
    has not returned within ``seconds`` (a hang)."""
    box: list[BaseException | None] = [None]

    def run() -> None:
        try:
            work()
        except BaseException as exc:
            box[0] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"hung: not done after {seconds} s"
    return box[0]


def _journal_steps(journal: Path) -> int:
    return sum(item["kind"] == "step" for item in read_journal(journal))


# point, at (counted from the second episode's start), flush interval, pause every k steps,
# and the fewest steps the recovery must bring back.
CASES = {
    "first-flush": ("flush", 1, 0.3, 5, 1),
    "later-flush": ("flush", 2, 0.3, 5, 1),
    "chunk-write": ("write", 6, 60.0, 0, 4),
    "journal-append": ("journal", 7, 60.0, 0, 5),
    "journal-sync": ("journal-sync", 1, 0.3, 5, 1),
    "finish": ("finish", 1, 60.0, 0, STEPS),
    "fsync": ("fsync", 1, 60.0, 0, STEPS),
    "rename": ("rename", 1, 60.0, 0, STEPS),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_full_disk_at_each_point_of_the_writer(tmp_path, case):
    point, at, interval, pause_every, least = CASES[case]
    folder = tmp_path / "demos"
    _record(_writer(folder, "first"), STEPS)
    first = folder / "first.h5"

    writer = _writer(folder, "second", interval)
    with DiskFull(point, at) as disk:
        error = _within(NO_HANG_S, lambda: _record(writer, STEPS, pause_every, 0.45))
        assert disk.failures >= 1, "the fault never fired"
        assert writer.done, "the writer thread still runs after reporting its error"

        # One line naming the file and the disk's reason, raised to the caller.
        assert isinstance(error, EpisodeError), repr(error)
        message = str(error)
        assert "\n" not in message and str(writer.partial_path) in message
        assert f"({NO_SPACE})" in message and "demostudio recover" in message
        # Every call after it says the same, at once.
        again = _within(2.0, lambda: writer.close())
        assert str(again) == message

        # The earlier episode is whole; the failed one's files stay for recover.
        assert validate(first) == [] and len(load_episode(first)) == STEPS
        assert writer.partial_path.exists() and writer.journal_path.exists()
        assert not writer.path.exists()
        journalled = _journal_steps(writer.journal_path)
        assert journalled >= least

        disk.space_back()
        results = recover_folder(folder)
    assert [r.episode for r in results] == [writer.path], results
    assert results[0].steps == journalled
    assert validate(writer.path) == [] and read_summary(writer.path).recovered
    episode = load_episode(writer.path, frames=True)
    np.testing.assert_array_equal(episode.frames[journalled], _frame(journalled))
    assert sorted(folder.iterdir()) == sorted([first, writer.path])


def test_full_disk_when_the_files_are_made(tmp_path):
    """No room for a new episode's files: one OSError naming the .partial (the CLI's net words
    it), and neither file is left behind (nothing of the episode was in them)."""
    folder = tmp_path / "demos"
    _record(_writer(folder, "first"), STEPS)
    with DiskFull("create", 1), pytest.raises(OSError) as caught:
        _writer(folder, "second")
    assert caught.value.filename == str(folder / "second.h5.partial")
    assert caught.value.strerror == NO_SPACE
    assert sorted(p.name for p in folder.iterdir()) == ["first.h5"]

    with DiskFull("journal", 1), pytest.raises(OSError) as caught:  # its first bytes
        _writer(folder, "third")
    assert caught.value.filename == str(folder / "third.h5.journal")
    assert sorted(p.name for p in folder.iterdir()) == ["first.h5"]


def test_a_caller_blocked_on_a_full_queue_is_released(tmp_path):
    """The writer fails while the caller waits for room in its queue (4 items): the caller
    gets the error instead of waiting forever."""
    writer = _writer(tmp_path, "ep")
    with DiskFull("write", 2):
        gate = threading.Event()
        writer.caller_busy()  # the writer holds off...

        def flood() -> None:
            writer.reset(_frame(0), {}, _frame(0))
            gate.set()
            for t in range(1, 500):
                writer.step(0, _frame(t), 0.0, False, False, {}, _frame(t))

        error = _within(NO_HANG_S, flood)
    assert gate.is_set() and isinstance(error, EpisodeError) and NO_SPACE in str(error)


def test_discard_after_a_failure_leaves_nothing(tmp_path):
    writer = _writer(tmp_path, "ep")
    with DiskFull("write", 2):
        error = _within(NO_HANG_S, lambda: _record(writer, STEPS))
        assert isinstance(error, EpisodeError)
        writer.discard()
    assert list(tmp_path.iterdir()) == []


def test_recover_on_a_full_disk_says_it_cannot_write(tmp_path, capsys):
    """``recover`` on a disk still full: one line saying it cannot write the episode (no space),
    naming the files, not "damaged" or "unusable"; every file as it was. Once there is room it
    recovers everything."""
    folder = tmp_path / "demos"
    writer = _writer(folder, "ep")
    with DiskFull("finish", 1) as disk:
        assert isinstance(_within(NO_HANG_S, lambda: _record(writer, STEPS)), EpisodeError)
        before = {p.name: p.read_bytes() for p in folder.iterdir()}
        assert main(["recover", str(folder)]) == 2
        out, err = capsys.readouterr()
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        assert str(writer.partial_path) in lines[0] and "ep.h5" in lines[0]
        assert f"cannot write ep.h5 ({NO_SPACE})" in lines[0]
        assert "damaged" not in err and "unusable" not in out + err
        assert {p.name: p.read_bytes() for p in folder.iterdir()} == before

        disk.space_back()
        assert main(["recover", str(folder)]) == 0
    assert "recovered" in capsys.readouterr().out
    assert len(load_episode(writer.path)) == STEPS


def test_interpreter_exit_stops_an_open_writer(tmp_path):
    """An episode left open at exit: its thread is stopped and joined (no daemon thread inside
    h5py while the interpreter shuts down), the process exits at once, and the episode recovers."""
    import subprocess
    import sys

    child = f"""
import numpy as np, sys
sys.path[:0] = {sys.path!r}
from tests.episode.test_diskfull import _writer, _frame
w = _writer(__import__("pathlib").Path({str(tmp_path)!r}), "open", flush_interval=0.0)
w.reset(_frame(0), {{}}, _frame(0))
for t in range(1, 200):
    w.step(0, _frame(t), 0.0, False, False, {{}}, _frame(t))
print("exiting", flush=True)
"""
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "exiting" in done.stdout, done.stderr
    assert time.monotonic() - start < 30
    results = recover_folder(tmp_path)
    assert len(results) == 1 and results[0].steps == 199, results


def test_recover_without_a_journal_on_a_full_disk(tmp_path):
    """A .partial with no journal is cut back to its last flush in a copy; no room to finish
    the copy is the same EpisodeError (not "unusable"), the .partial untouched, no copy left."""
    writer = _writer(tmp_path, "ep", flush_interval=0.0)
    with DiskFull("rename", 1):
        assert isinstance(_within(NO_HANG_S, lambda: _record(writer, STEPS)), EpisodeError)
    writer.journal_path.unlink()
    before = writer.partial_path.read_bytes()
    with DiskFull("fsync", 1), pytest.raises(EpisodeError) as caught:
        recover_partial(writer.partial_path)
    assert f"cannot write ep.h5 ({NO_SPACE}); nothing was changed" in str(caught.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ep.h5.partial"]
    assert writer.partial_path.read_bytes() == before
    result = recover_partial(writer.partial_path)
    assert result.episode == writer.path and result.steps == STEPS, result

"""A checkpoint or the saved replay written on a full disk: the previous file stays whole
under its name, no temporary file is left, and the error is the disk's, naming the file
(which the CLI's net turns into one line).

Real ENOSPC without a full disk: the kernel's ``/dev/full`` fails every write with it; the
temporary file the save writes is made a link to it."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import numpy as np
import pytest
import torch

from agents.core import atomic_file
from agents.core.checkpoint import load_replays, save_checkpoint, save_replays
from demostudio.cli.oserrors import os_error_line

NO_SPACE = os.strerror(errno.ENOSPC)


def _fill_disk_at(point: str, tmp: Path, monkeypatch) -> None:
    """The disk is full when the save reaches ``point``."""
    if point == "write":
        if not os.path.exists("/dev/full"):
            pytest.skip("no /dev/full")
        tmp.symlink_to("/dev/full")
    elif point == "fsync":

        def fsync(fd: int) -> None:
            raise OSError(errno.ENOSPC, NO_SPACE)

        monkeypatch.setattr(atomic_file.os, "fsync", fsync)
    else:

        def replace(src, dst) -> None:
            raise OSError(errno.ENOSPC, NO_SPACE, str(src), None, str(dst))

        monkeypatch.setattr(atomic_file.os, "replace", replace)


def _check_error(caught: pytest.ExceptionInfo, path: Path) -> None:
    assert caught.value.errno == errno.ENOSPC and caught.value.filename == str(path)
    line = os_error_line(caught.value)
    assert line is not None and "\n" not in line
    assert line.startswith(f"{path}: ") and f"({NO_SPACE})" in line


@pytest.mark.parametrize("point", ["write", "fsync", "rename"])
def test_checkpoint_on_a_full_disk_keeps_the_previous_one(tmp_path, monkeypatch, point):
    path = tmp_path / "checkpoints" / "final.pt"
    save_checkpoint(path, {"algo": "r2d2", "weights": torch.arange(1000.0)})
    before = path.read_bytes()
    tmp = path.with_name(path.name + ".tmp")
    _fill_disk_at(point, tmp, monkeypatch)
    with pytest.raises(OSError) as caught:
        save_checkpoint(path, {"algo": "r2d2", "weights": torch.zeros(100_000)})
    monkeypatch.undo()
    _check_error(caught, path)
    assert path.read_bytes() == before
    assert torch.load(path, weights_only=True)["weights"].equal(torch.arange(1000.0))
    assert sorted(p.name for p in path.parent.iterdir()) == ["final.pt"]


@pytest.mark.parametrize("point", ["write", "fsync", "rename"])
def test_saved_replay_on_a_full_disk_keeps_the_previous_one(tmp_path, monkeypatch, point):
    first = {"demo": {"obs": np.arange(10.0), "priorities": np.ones(10)}}
    path = save_replays(tmp_path, 100, first)
    tmp = path.with_name(path.name + ".tmp")
    _fill_disk_at(point, tmp, monkeypatch)
    with pytest.raises(OSError) as caught:
        save_replays(tmp_path, 200, {"demo": {"obs": np.zeros(100_000), "priorities": np.ones(3)}})
    monkeypatch.undo()
    _check_error(caught, path)
    steps, arrays = load_replays(tmp_path)
    assert steps == 100 and np.array_equal(arrays["demo"]["obs"], np.arange(10.0))
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]

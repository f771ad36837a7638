"""An output path the user cannot write (a file where a folder must go, no permission, a
full disk) ends any command in one line naming the path and what was expected, exit 2, no
traceback, nothing left behind (demostudio/cli/oserrors.py, the net under every command)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from demostudio.cli import main
from demostudio.cli.oserrors import os_error_line

DEMO = sorted((Path(__file__).parent.parent / "demos" / "CartPole-v1").glob("*.h5"))[0]

# {blocked}: a path under a regular file (no folder can be made there, root or not)
COMMANDS = {
    "export": "export {demo} --format png --out {blocked}/png --no-progress",
    "merge": "merge {demo} --out {blocked}/m",
    "split": "split {demo} --out {blocked}/s",
    "train": "train bc --env CartPole-v1 --demos {demo} --max-updates 2 --device cpu "
    "--no-progress --no-tensorboard --run-dir {blocked}/run",
    "compare": "compare --env CartPole-v1 --demos {demo} --algos bc --seeds 1 --budget 50 "
    "--out {blocked}/cmp",
}


def _run(argv: list[str], capsys) -> tuple[int, str]:
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    return code, capsys.readouterr().err


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_an_output_under_a_file_is_one_line(name, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    argv = COMMANDS[name].format(demo=DEMO, blocked=blocker).split()
    code, err = _run(argv, capsys)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and "Traceback" not in err, err
    assert len(lines) == 1 and lines[0].startswith("demostudio: error: "), lines
    assert str(blocker) in lines[0] and "expected" in lines[0], lines
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]  # nothing left behind
    assert blocker.read_text() == "not a folder\n"


def test_no_permission_names_the_path(tmp_path, capsys, monkeypatch):
    """Root ignores a folder's mode, so the refusal is the kernel's as seen by a user."""

    def refuse(self, *args, **kwargs):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(self))

    monkeypatch.setattr(Path, "mkdir", refuse)
    code, err = _run(["merge", str(DEMO), "--out", str(tmp_path / "ro" / "m")], capsys)
    assert code == 2 and "Traceback" not in err, err
    assert err.count("\n") == 1 and "Permission denied" in err, err
    assert "expected a place this user may write to" in err, err


def test_the_line_of_each_kind_of_error():
    h5 = PermissionError(errno.EACCES, "Unable to synchronously create file (unable to open "
                         "file: name = '/ro/x.h5.partial', errno = 13)")  # fmt: skip
    assert os_error_line(h5) == (
        "/ro/x.h5.partial: cannot make, read or write it (Permission denied); "
        "expected a place this user may write to"
    )
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "/data/run/metrics.jsonl")
    assert os_error_line(full).endswith("(No space left on device); expected room on the disk")
    assert os_error_line(OSError(errno.ECONNREFUSED, "refused")) is None  # not a path: raised
    assert os_error_line(OSError("no errno")) is None


def test_an_hdf5_write_on_a_full_disk_is_one_line_in_every_command(tmp_path, monkeypatch, capsys):
    """h5py reports a failed write as a RuntimeError whose text holds the errno (tag, trim,
    compact and import write HDF5 in the command's own thread): the same one line as an
    OSError, naming the file."""
    import shutil

    import demostudio.cli.library_cmds as library_cmds

    root = Path(__file__).resolve().parents[1]
    folder = tmp_path / "rec" / "CartPole-v1"
    folder.mkdir(parents=True)
    sample = sorted((root / "demos" / "CartPole-v1").glob("*.h5"))[0]
    target = shutil.copy(sample, folder / sample.name)

    def full_disk(path, **_):
        raise RuntimeError(
            "Can't write data (file write failed: time = now\n, filename = "
            f"'{path}', file descriptor = 4, errno = 28, error message = 'No space left on "
            "device', buf = 0x7f00, total write size = 830)"
        )

    monkeypatch.setattr(library_cmds, "update_metadata", full_disk)
    assert main(["tag", str(target), "--add", "good"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"demostudio: error: {target}: ")
    assert "No space left on device" in err[0] and "expected room on the disk" in err[0]

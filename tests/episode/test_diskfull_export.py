"""Exports on a full disk: one line naming the file and "No space left on device", exit 2, and
nothing half-written under a final name (an earlier export there stays as it was).

Real ENOSPC without a full disk: the kernel's ``/dev/full`` fails every write with it, so a
file the export writes through a link to it fails exactly as on a full disk."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from demostudio.cli import main
from demostudio.cli.record_cmd import RecordConfig, record
from demostudio.export import GifWriter
from demostudio.export import writers as export_writers

NO_SPACE = os.strerror(errno.ENOSPC)
needs_dev_full = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")


@pytest.fixture(scope="module")
def episode(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("demos")
    cfg = RecordConfig(env="CartPole-v1", policy="random", episodes=1, out=root, seed=3)
    (path,) = record(cfg, progress=False)
    return path


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.replace("\r", "\n").splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith("export ")]  # the progress bar
    assert len(lines) == 1 and lines[0].startswith("demostudio: error: "), err
    assert "Traceback" not in err
    return lines[0]


@needs_dev_full
@pytest.mark.parametrize("fmt", ["mp4", "gif"])
def test_video_export_on_a_full_disk(episode, tmp_path, capsys, fmt):
    out = tmp_path / f"clip.{fmt}"
    assert main(["export", str(episode), "--format", fmt, "--out", str(out), "--end", "5"]) == 0
    before = out.read_bytes()
    capsys.readouterr()
    Path(f"{out}.partial").symlink_to("/dev/full")  # where the export writes before renaming
    assert main(["export", str(episode), "--format", fmt, "--out", str(out)]) == 2
    line = _one_error_line(capsys)
    assert str(out) in line and NO_SPACE in line
    assert out.read_bytes() == before  # the earlier export, as it was
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]


def test_png_export_on_a_full_disk(episode, tmp_path, capsys, monkeypatch):
    """The disk fills up at the third frame: frames 0 and 1 are whole PNGs, the third is
    neither half-written nor (from an earlier export) damaged, no temporary file is left."""
    out = tmp_path / "frames"
    assert main(["export", str(episode), "--format", "png", "--out", str(out), "--end", "4"]) == 0
    earlier = (out / "frame_000002.png").read_bytes()
    capsys.readouterr()
    save = Image.Image.save
    calls = []

    def full_at_third(self, fp, *args, **kwargs):
        calls.append(fp)
        if len(calls) < 3:
            return save(self, fp, *args, **kwargs)
        Path(fp).write_bytes(b"\x89PNG\r\n\x1a\n half")  # what a full disk leaves
        raise OSError(errno.ENOSPC, NO_SPACE)

    monkeypatch.setattr(Image.Image, "save", full_at_third)
    assert main(["export", str(episode), "--format", "png", "--out", str(out), "--end", "4"]) == 2
    line = _one_error_line(capsys)
    assert f"{out / 'frame_000002.png'}: " in line and NO_SPACE in line
    monkeypatch.undo()
    assert (out / "frame_000002.png").read_bytes() == earlier
    assert sorted(p.name for p in out.iterdir()) == [f"frame_{i:06d}.png" for i in range(5)]
    for i in range(5):
        with Image.open(out / f"frame_{i:06d}.png") as im:
            im.load()


@needs_dev_full
def test_png_frame_that_fails_leaves_no_file(tmp_path):
    """A single frame (the viewer's "save frame") on a full disk: the disk's error naming the
    file, and no file under its name."""
    target = tmp_path / "frame.png"
    Path(f"{target}.partial").symlink_to("/dev/full")
    with pytest.raises(OSError) as caught:
        export_writers.save_png(np.zeros((40, 60, 3), np.uint8), target)
    assert caught.value.errno == errno.ENOSPC and caught.value.filename == str(target)
    assert list(tmp_path.iterdir()) == []


@needs_dev_full
def test_gif_spool_on_a_full_disk_is_one_line(tmp_path):
    """The GIF's frames are spooled to a temporary file first; no room there is one line
    naming the GIF, not a bare OSError naming no file."""
    writer = GifWriter(tmp_path / "clip.gif", (60, 40), 30.0)
    writer._raw.close()
    writer._raw = open("/dev/full", "wb", buffering=0)  # noqa: SIM115 (the writer closes it)
    with pytest.raises(RuntimeError) as caught:
        writer.write(np.zeros((40, 60, 3), np.uint8))
    message = str(caught.value)
    assert "\n" not in message and str(tmp_path / "clip.gif") in message and NO_SPACE in message
    writer.close()
    assert list(tmp_path.iterdir()) == []

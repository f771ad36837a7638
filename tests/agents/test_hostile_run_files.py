"""Run folders read and written as hostile input by ``plot``, ``train`` and ``compare``: a
metrics.jsonl that is a FIFO, /dev/zero, a folder, a sparse 2 GB file, a 2 MB line, deeply
nested or of the wrong types is one line naming the file (and line and field), never a hang,
a traceback or gigabytes read; nothing is written through a link out of the run folder."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from demostudio.cli import main
from demostudio.episode.jsonfile import MAX_JSON_LINES_BYTES
from tests.hostile_files import make_hostile

pytestmark = pytest.mark.timeout(60)  # a FIFO opened by mistake blocks: fail, do not hang

GOOD_ROW = {"kind": "eval", "env_steps": 10, "eval_return": 1.5}


def _metrics(run: Path, kind: str) -> Path:
    run.mkdir(parents=True, exist_ok=True)
    path = run / "metrics.jsonl"
    if make_hostile(path, kind):  # a 2 GB one was read whole before (4 GB RSS)
        return path
    if kind == "long_line":
        path.write_text(json.dumps({**GOOD_ROW, "x": "a" * 2_000_000}) + "\n")
    elif kind == "list_row":
        path.write_text("[1, 2]\n")
    elif kind == "no_steps":
        path.write_text(json.dumps({"kind": "eval", "eval_return": 1.0}) + "\n")
    elif kind == "text_return":
        path.write_text(json.dumps({**GOOD_ROW, "eval_return": "high"}) + "\n")
    elif kind == "not_utf8":
        path.write_bytes(json.dumps(GOOD_ROW).encode() + b"\n\xff\xfe\n")
    return path


@pytest.mark.parametrize(
    "kind, expected",
    [
        ("fifo", ": expected a metrics file of a training run, got a special file (FIFO, device)"),
        ("devzero", ": expected a metrics file of a training run, got a special file"),
        ("folder", ": expected a metrics file of a training run, got a folder"),
        ("loop", ": expected a metrics file of a training run, got a link loop"),
        (
            "huge",
            f": expected a metrics file of a training run of at most {MAX_JSON_LINES_BYTES} bytes",
        ),
        ("long_line", " [line 1]: expected lines of at most 1048576 bytes"),
        ("nested", " [line 1]: expected JSON nested at most 64 deep"),
        ("list_row", " [line 1]: expected a JSON object, got list"),
        ("no_steps", " [line 1: env_steps]: expected a whole number >= 0, got None"),
        ("text_return", " [eval_return]: expected numbers, got 'high'"),
        ("not_utf8", " [line 2]: expected UTF-8 text, got byte 0xff"),
    ],
)
def test_plot_of_a_hostile_metrics_file_is_one_line(kind, expected, tmp_path, capsys):
    """Before: a FIFO hung, /dev/zero took 16 GB, a list row / missing env_steps / folder /
    nested row were tracebacks, a text return was plotted as a category with exit 0."""
    path = _metrics(tmp_path / "run", kind)
    out = tmp_path / "curves.png"
    assert main(["plot", str(tmp_path / "run"), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"demostudio: error: {path}{expected}")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists()


def test_plot_out_a_folder_or_under_a_file_is_one_line(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.jsonl").write_text(json.dumps(GOOD_ROW) + "\n")
    assert main(["plot", str(run), "--out", str(tmp_path)]) == 2  # wrote tmp_path.png, said 0
    assert (
        capsys.readouterr().err
        == f"demostudio: error: --out {tmp_path}: expected a PNG file path, got a folder\n"
    )
    under_file = run / "metrics.jsonl" / "x.png"
    assert main(["plot", str(run), "--out", str(under_file)]) == 2  # FileExistsError traceback
    err = capsys.readouterr().err
    assert err.startswith(f"demostudio: error: --out {under_file}: expected a PNG file path")
    assert err.count("\n") == 1
    assert main(["plot", str(run), "--out", str(tmp_path / "curves")]) == 0
    assert capsys.readouterr().out == f"{tmp_path / 'curves.png'}\n"


@pytest.mark.parametrize("kind", ["config_link", "metrics_link", "checkpoints_link", "fifo",
                                  "metrics_folder", "run_dir_file"])  # fmt: skip
def test_train_writes_nothing_through_a_link_nor_into_a_fifo(kind, tmp_path, capsys):
    """train wrote config.json through a link (an outside file overwritten), appended metrics
    through one, saved and pruned checkpoints in a linked folder, hung on a FIFO metrics.jsonl,
    and a folder metrics.jsonl or a file --run-dir were tracebacks."""
    run = tmp_path / "run"
    run.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "precious.txt"
    victim.write_text("precious")
    old_ckpt = outside / "step-0000000001.pt"
    old_ckpt.write_bytes(b"weights")
    bad = {"config_link": run / "config.json", "metrics_link": run / "metrics.jsonl",
           "checkpoints_link": run / "checkpoints", "fifo": run / "metrics.jsonl",
           "metrics_folder": run / "metrics.jsonl", "run_dir_file": run}[kind]  # fmt: skip
    if kind.endswith("_link"):
        bad.symlink_to(outside if kind == "checkpoints_link" else victim)
    elif kind == "fifo":
        os.mkfifo(bad)
    elif kind == "metrics_folder":
        bad.mkdir()
    else:
        run.rmdir()
        run.write_text("my notes")
    argv = ["train", "r2d2", "--env", "CartPole-v1", "--run-dir", str(run), "--device", "cpu",
            "--total-env-steps", "50", "--no-progress", "--no-tensorboard"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"demostudio: error: --run-dir: {bad}: expected ")
    assert err.count("\n") == 1
    assert victim.read_text() == "precious" and old_ckpt.read_bytes() == b"weights"
    assert sorted(p.name for p in outside.iterdir()) == ["precious.txt", "step-0000000001.pt"]

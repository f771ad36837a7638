"""DESIGN: recordings never go among the bundled sample demos. Every command that writes is
refused, in one line naming the path, when its output is the bundled demos folder or inside
it, given absolute, relative or through a link; reading demos/ is unchanged."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from demostudio.assets import SAMPLE_DEMOS
from demostudio.cli import CommandError, main, refuse_sample_demos
from demostudio.ui.settings import derived_output_folder

SAMPLE = sorted((SAMPLE_DEMOS / "CartPole-v1").glob("*.h5"))[0]


def _listing() -> list[tuple[str, int, int]]:
    return sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in SAMPLE_DEMOS.rglob("*"))


CASES = {
    "train": ["train", "r2d2", "--env", "CartPole-v1", "--run-dir", "{D}/CartPole-v1/run"],
    "record": ["record", "CartPole-v1", "--episodes", "1", "--out", "{D}"],
    "play": ["play", "CartPole-v1", "--out", "{D}/mine"],
    "watch": ["watch", "runs/x", "--headless", "--record", "{D}"],
    "launch": ["launch", "--out", "{D}"],
    "export": ["export", str(SAMPLE), "--format", "png", "--out", "{D}/CartPole-v1/frames"],
    "minari": [
        "export",
        str(SAMPLE),
        "--format",
        "minari",
        "--dataset-id",
        "a/b-v0",
        "--out",
        "{D}",
    ],
    "compare": ["compare", "--demos", "{D}/CartPole-v1", "--out", "{D}/cmp"],
    "trim --out": ["trim", str(SAMPLE), "--start", "2", "--out", "{D}/CartPole-v1/t.h5"],
    "merge": ["merge", "{D}/CartPole-v1", "--out", "{D}/merged"],
    "split": ["split", "{D}/CartPole-v1", "--out", "{D}/split"],
    "import": ["import", "a/b-v0", "--out", "{D}"],
    "plot": ["plot", "runs/x", "--out", "{D}/curves.png"],
    "keymap": ["keymap", "CartPole-v1", "--write", "{D}/keys.json"],
}


@pytest.mark.parametrize("how", ["absolute", "relative", "link"])
@pytest.mark.parametrize("name", list(CASES))
def test_outputs_into_the_sample_demos_are_refused(name, how, tmp_path, monkeypatch, capsys):
    if how == "absolute":
        demos = str(SAMPLE_DEMOS)
    elif how == "relative":
        monkeypatch.chdir(SAMPLE_DEMOS.parent / "assets")
        demos = "../demos"
    else:
        (tmp_path / "samples").symlink_to(SAMPLE_DEMOS)
        demos = str(tmp_path / "samples")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    before = _listing()
    argv = [a.replace("{D}", demos) for a in CASES[name]]
    assert main(argv) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and f"{os.path.realpath(SAMPLE_DEMOS)}, the bundled sample demos" in err[0]
    assert f" {demos}" in err[0]  # the path as given
    assert _listing() == before
    assert not (tmp_path / "config").exists()  # launch remembered nothing


def test_a_sample_trimmed_without_out_goes_to_the_recordings_folder(tmp_path, monkeypatch, capsys):
    """`trim SAMPLE` (as quality suggests, and the replay window's K) writes the piece into
    the recordings folder of its env, not beside the sample; other files' pieces stay beside
    them."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    before = _listing()
    assert main(["trim", str(SAMPLE), "--start", "2"]) == 0
    made = list((tmp_path / "data" / "demostudio" / "recordings" / "CartPole-v1").glob("*.h5"))
    assert len(made) == 1 and made[0].name.startswith(SAMPLE.stem + "_trim2-")
    assert str(made[0]) in capsys.readouterr().out
    assert _listing() == before
    mine = tmp_path / "mine.h5"
    mine.write_bytes(SAMPLE.read_bytes())
    assert derived_output_folder(mine) is None
    assert main(["trim", str(mine), "--start", "2"]) == 0
    assert len(list(tmp_path.glob("mine_trim2-*.h5"))) == 1


def test_only_the_sample_demos_folder_is_refused(tmp_path):
    refuse_sample_demos(None, "--out")
    refuse_sample_demos(SAMPLE_DEMOS.parent / "demos-copy", "--out")  # a name it starts
    refuse_sample_demos(tmp_path / "demos", "--out")
    with pytest.raises(CommandError, match=r"--out .*: expected a place outside"):
        refuse_sample_demos(Path(SAMPLE_DEMOS) / "x" / "y.h5", "--out")


@pytest.mark.parametrize("command", ["tag", "compact"])
@pytest.mark.parametrize("how", ["file", "folder", "link"])
def test_editing_a_sample_in_place_is_refused(command, how, tmp_path, monkeypatch, capsys):
    """`tag` and `compact` write into the episode file itself: on a sample (the file, its
    folder or a link to either) they refuse before writing any, in one line that says how
    to make a copy of one's own; the copy then takes them."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    target = {"file": str(SAMPLE), "folder": str(SAMPLE.parent)}.get(how)
    if target is None:
        (tmp_path / "samples").symlink_to(SAMPLE_DEMOS)
        target = str(tmp_path / "samples")
    before = _listing()
    argv = [command, target] + (["--add", "good"] if command == "tag" else [])
    assert main(argv) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "expected one of your episodes, got a bundled sample" in err[0]
    mine = tmp_path / "data" / "demostudio" / "recordings" / "CartPole-v1"
    assert f"to {command} it, copy it to your recordings first: mkdir -p {mine}" in err[0]
    assert _listing() == before
    mine.mkdir(parents=True)
    copy = mine / SAMPLE.name
    copy.write_bytes(SAMPLE.read_bytes())
    assert main([command, str(copy), *argv[2:]]) == 0

"""The data commands through ``demostudio.cli.main``: import, merge, split, and
``export --format minari`` (parsed by the export command, written by the interop code)."""

from __future__ import annotations

import minari

from demostudio.cli import build_parser, main
from demostudio.episode import read_summary


def test_export_then_import_through_the_cli(demos, minari_root, tmp_path, capsys):
    folder = demos["MiniGrid-DoorKey-5x5-v0"][0].parent
    assert "export" in build_parser().get_default("commands")
    rc = main(
        ["export", str(folder), "--format", "minari", "--dataset-id", "cli/doorkey-v0", "--frames"]
    )
    assert rc == 0, capsys.readouterr().err
    assert minari.load_dataset("cli/doorkey-v0").total_episodes == 2

    rc = main(["import", "cli/doorkey-v0", "--out", str(tmp_path / "demos")])
    out = capsys.readouterr().out
    assert rc == 0
    assert "imported 2 episode(s)" in out
    files = sorted((tmp_path / "demos" / "MiniGrid-DoorKey-5x5-v0").glob("*.h5"))
    assert [p.name for p in files] == sorted(p.name for p in demos["MiniGrid-DoorKey-5x5-v0"])
    assert read_summary(files[0]).controller == "policy:scripted-doorkey"


def test_cli_errors_name_the_problem(demos, minari_root, tmp_path, capsys):
    rc = main(["import", "nobody/nothing-v0", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 2 and "nobody/nothing-v0" in err and "expected a local Minari dataset" in err
    rc = main(["export", *map(str, demos["root"]), "--format", "minari", "--dataset-id", "x-v0"])
    err = capsys.readouterr().err
    assert rc == 2 and "[env_id]" in err and "expected every episode" in err
    rc = main(["merge", "--out", str(tmp_path / "m")])
    assert rc == 2 and "expected at least one episode file or folder" in capsys.readouterr().err


def test_merge_and_split_through_the_cli(demos, tmp_path, capsys):
    root = str(demos["root"][0])
    rc = main(["merge", root, "--out", str(tmp_path / "m"), "--controller", "policy:*"])
    out = capsys.readouterr().out
    assert rc == 0 and "merged 4 episode(s)" in out and "1 episode(s) did not match" in out
    args = ["--out", str(tmp_path / "s"), "--validation", "0.5", "--seed", "7"]
    rc = main(["split", root, *args, "--tag", "good", "--min-return", "-1000"])
    out = capsys.readouterr().out
    assert rc == 0 and "split 1 episode(s)" in out and "1 train, 0 validation" in out
    assert len(list((tmp_path / "s" / "train").rglob("*.h5"))) == 1


def test_merge_and_split_exit_1_when_they_skip_an_unreadable_file(demos, tmp_path, capsys):
    src = tmp_path / "src"
    src.mkdir()
    good = demos["MountainCar-v0"][0]
    (src / good.name).write_bytes(good.read_bytes())
    (src / "broken.h5").write_bytes(b"not an episode")
    assert main(["merge", str(src), "--out", str(tmp_path / "m")]) == 1
    captured = capsys.readouterr()
    assert "merged 1 episode(s)" in captured.out and "skipped unreadable" in captured.err
    assert main(["split", str(src), "--out", str(tmp_path / "s")]) == 1
    assert "skipped unreadable" in capsys.readouterr().err
    assert len(list((tmp_path / "m").rglob("*.h5"))) == 1

"""The library commands on real recordings: record, ls, info, validate, verify, tag."""

from __future__ import annotations

import json

import h5py
import pytest

from demostudio.cli import main
from demostudio.episode import open_episode, read_summary


@pytest.fixture
def recorded(tmp_path):
    assert (
        main(
            [
                "record",
                "MiniGrid-DoorKey-8x8-v0",
                "--episodes",
                "2",
                "--seed",
                "5",
                "--out",
                str(tmp_path),
                "--player",
                "ada",
            ]
        )
        == 0
    )
    folder = tmp_path / "MiniGrid-DoorKey-8x8-v0"
    return sorted(folder.glob("*.h5"))


def test_record_stores_the_contract(recorded):
    assert len(recorded) == 2
    s = read_summary(recorded[0])
    assert s.env_id == "MiniGrid-DoorKey-8x8-v0" and s.seed == 5 and s.player == "ada"
    assert s.controller == "policy:scripted-doorkey" and s.terminated and s.total_return > 0
    assert s.action_meanings[:3] == ("left", "right", "forward")
    assert {"gymnasium", "numpy", "h5py", "minigrid"} <= set(s.attrs["versions"])
    with open_episode(recorded[0]) as ep:
        assert ep.frame(0).shape == (256, 256, 3)
        obs = ep.observation(0)
        assert set(obs) == {"image", "direction", "mission"} and "key" in obs["mission"]
        assert len(ep.h5["timestamps"]) == s.length + 1


def test_ls_info_validate(recorded, capsys):
    folder = recorded[0].parent
    assert main(["ls", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "policy:scripted-doorkey" in out and "ada" in out and "2 episode(s)" in out
    assert main(["info", str(recorded[0])]) == 0
    out = capsys.readouterr().out
    assert "frames" in out and "gzip(1)" in out and "observations/mission" in out
    assert "env_id: MiniGrid-DoorKey-8x8-v0" in out
    assert main(["validate", str(folder)]) == 0


def test_verify_matches_then_reports_the_diverging_step(recorded, capsys):
    assert main(["verify", str(recorded[0]), "-q"]) == 0
    assert "matches" in capsys.readouterr().out
    with h5py.File(recorded[0], "r+") as f:
        actions = f["actions"]
        actions[3] = (actions[3] + 1) % 3  # a different turn at step 3
    assert main(["verify", str(recorded[0]), "-q"]) == 1
    assert "diverges at step 3" in capsys.readouterr().out


def test_tags_and_notes(recorded, capsys):
    assert main(["tag", str(recorded[0]), "--add", "good", "clean", "--notes", "nice run"]) == 0
    assert main(["tag", str(recorded[0]), "--remove", "clean"]) == 0
    s = read_summary(recorded[0])
    assert s.tags == ("good",) and s.notes == "nice run"
    with h5py.File(recorded[0], "r") as f:  # stored as JSON text, not pickled
        assert json.loads(f.attrs["tags"]) == ["good"]
    capsys.readouterr()
    assert main(["ls", str(recorded[0].parent)]) == 0
    assert "good" in capsys.readouterr().out


def test_compact_is_lossless_and_smaller(recorded, capsys):
    with open_episode(recorded[0]) as ep:
        frames = [ep.frame(i) for i in range(len(ep) + 1)]
        before = ep.load()
    size = recorded[0].stat().st_size
    assert main(["compact", str(recorded[0])]) == 0
    assert recorded[0].stat().st_size < size
    with open_episode(recorded[0]) as ep:
        assert ep.h5["frames"].compression_opts == 9
        for i, f in enumerate(frames):
            assert (ep.frame(i) == f).all()
        after = ep.load()
        assert after.summary.attrs == before.summary.attrs
        assert (after.observations["image"] == before.observations["image"]).all()
    assert main(["validate", str(recorded[0])]) == 0 and main(["verify", str(recorded[0])]) == 0


def test_ls_and_info_escape_control_characters_and_tag_refuses_them(recorded, capsys):
    """A player or tag holding an escape sequence, a newline or a bidi override was printed
    raw by ls and info (clearing the screen, faking a row, reversing the text); tag --add
    stored one."""
    path = recorded[0]
    with h5py.File(path, "r+") as f:
        f.attrs["player"] = json.dumps("a\nFAKE LINE\x1b[2J")
        f.attrs["tags"] = json.dumps(["\u202egood", "\x1b[31mred"])
    assert main(["ls", str(path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out
    assert "a\\nFAKE LINE\\x1b[2J" in out and "\\u202egood,\\x1b[31mred" in out
    assert len(out.strip().splitlines()) == 5  # header, rule, one row, blank, count
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "  player: a\\nFAKE LINE\\x1b[2J\n" in out
    before = path.read_bytes()
    assert main(["tag", str(path), "--add", "\x1b[31mZ\nX"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        f"demostudio: error: {path} [tags]: expected tags without control characters, "
        "got '\\x1b[31mZ\\nX'"
    )
    assert path.read_bytes() == before


@pytest.mark.parametrize("command", ["validate", "verify"])
def test_a_check_that_finds_no_episodes_does_not_pass(tmp_path, capsys, command):
    empty = tmp_path / "looks-like.h5"  # a folder, holding nothing
    empty.mkdir()
    assert main([command, str(empty)]) == 1
    assert capsys.readouterr().err.strip() == f"no episodes under {empty}"


def test_ls_fits_the_terminal(recorded, capsys, monkeypatch):
    """COLUMNS=80: the least useful columns go, the path keeps its file name; a bad file's
    reason, cut from its row, is printed in full under the table. Piped (no COLUMNS, not a
    terminal) every column stays, for scripts."""
    folder = recorded[0].parent
    (folder / "broken.h5").write_bytes(b"not hdf5")
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["ls", str(folder)]) == 0
    lines = capsys.readouterr().out.splitlines()
    table = lines[: lines.index("")]
    assert all(len(line) <= 80 for line in table), table
    header = table[0].split()
    assert header[:4] == ["file", "env", "length", "return"] and "takeovers" not in header
    for path in recorded:
        assert any(row.split()[0].endswith(path.name) for row in table[2:])
    assert any("BAD FILE" in row for row in table)
    assert any(line.startswith(f"{folder / 'broken.h5'}: ") for line in lines)

    monkeypatch.delenv("COLUMNS")
    assert main(["ls", str(folder)]) == 0
    header = capsys.readouterr().out.splitlines()[0].split()
    assert header == ["file", "env", "controller", "player", "length", "return", "human",
                      "takeovers", "end", "recorded", "size", "tags"]  # fmt: skip

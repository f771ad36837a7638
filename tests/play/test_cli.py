"""`demostudio play` and `demostudio launch` from the command line."""

from __future__ import annotations

import json
import subprocess
import sys

import demostudio.launcher
from demostudio.cli import main
from demostudio.episode import find_episodes, read_summary


def test_play_records_until_the_episodes_asked_for(tmp_path, capsys):
    rc = main(
        [
            "play",
            "MountainCar-v0",
            "--out",
            str(tmp_path),
            "--countdown",
            "0",
            "--fps",
            "2000",
            "--episodes",
            "1",
            "--max-episode-steps",
            "4",
            "--player",
            "zed",
        ]
    )
    assert rc == 0
    files = find_episodes(tmp_path / "MountainCar-v0")
    assert len(files) == 1
    s = read_summary(files[0])
    assert s.player == "zed" and s.length == 4 and s.controller == "keyboard"
    assert "1 episode(s) saved" in capsys.readouterr().out


def test_play_with_a_bad_keymap_is_a_clear_error(tmp_path, capsys):
    bad = tmp_path / "keys.json"
    bad.write_text(json.dumps({"noop": 1, "bindings": [{"keys": ["left"], "action": 9}]}))
    rc = main(["play", "MountainCar-v0", "--out", str(tmp_path), "--keymap", str(bad)])
    assert rc == 2
    err = capsys.readouterr().err
    assert f"{bad}: bindings[0].action: expected an action in Discrete(3)" in err
    assert find_episodes(tmp_path) == []


def test_play_unknown_env_and_bad_kwargs(tmp_path, capsys):
    assert main(["play", "NoSuchGame-v9", "--out", str(tmp_path)]) == 2
    assert "NoSuchGame-v9" in capsys.readouterr().err
    assert main(["play", "CartPole-v1", "--env-kwargs", "[1]", "--out", str(tmp_path)]) == 2
    assert "--env-kwargs: expected a JSON object" in capsys.readouterr().err


def test_bare_demostudio_opens_the_launcher(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(demostudio.launcher, "run_launcher", lambda *a, **k: calls.append((a, k)))
    assert main([]) == 0
    assert calls and str(calls[0][0][0]) == "demos"


def test_practice_mode_saves_nothing(tmp_path, capsys):
    args = ["play", "CartPole-v1", "--out", str(tmp_path), "--no-record", "--countdown", "0"]
    args += ["--fps", "2000", "--episodes", "2", "--max-episode-steps", "3"]
    assert main(args) == 0
    assert find_episodes(tmp_path) == []
    assert "(recording off)" in capsys.readouterr().out


def test_cli_parser_does_not_import_pygame():
    code = (
        "import sys, demostudio.cli as c; c.build_parser(); "
        "assert 'pygame' not in sys.modules and 'torch' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_keymap_command_shows_and_writes_a_template(tmp_path, capsys):
    assert main(["keymap", "ALE/SpaceInvaders-v5"]) == 0
    out = capsys.readouterr().out
    assert "get_keys_to_action()" in out and "RIGHTFIRE" in out
    target = tmp_path / "invaders_keys.json"
    assert main(["keymap", "ALE/SpaceInvaders-v5", "--write", str(target)]) == 0
    doc = json.loads(target.read_text())
    assert doc["noop"] == 0 and len(doc["bindings"]) == 6  # E is NOOP too
    # The template is a valid --keymap file for the game.
    assert main(["keymap", "ALE/SpaceInvaders-v5", "--keymap", str(target)]) == 0
    assert str(target) in capsys.readouterr().out
    doc["bindings"][0]["keys"] = ["nokey"]
    target.write_text(json.dumps(doc))
    assert main(["keymap", "ALE/SpaceInvaders-v5", "--keymap", str(target)]) == 2
    assert f"{target}: bindings[0].keys: expected a pygame key name" in capsys.readouterr().err


def test_play_rejects_non_positive_numbers(tmp_path, capsys):
    for flag in ("--fps", "--episodes", "--zoom"):
        assert main(["play", "CartPole-v1", "--out", str(tmp_path), flag, "0"]) == 2
        assert f"{flag}: expected a positive number, got 0" in capsys.readouterr().err

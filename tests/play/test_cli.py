"""`demostudio play` and `demostudio launch` from the command line."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest

import demostudio.launcher
from demostudio.cli import main
from demostudio.episode import find_episodes, read_summary
from demostudio.ui.display import private_runtime_dir
from demostudio.ui.settings import Settings, default_recordings, load_settings, recordings_root


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


def test_bare_demostudio_opens_the_launcher_on_your_recordings(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(demostudio.launcher, "run_launcher", lambda *a, **k: calls.append((a, k)))
    assert main([]) == 0
    mine = default_recordings()
    assert calls[-1][0][0] == mine and mine.is_relative_to(os.environ["XDG_DATA_HOME"])
    # --out sets the folder and it is remembered: the next launch, play and record use it.
    chosen = tmp_path / "my-recordings"
    assert main(["launch", "--out", str(chosen)]) == 0
    assert main([]) == 0
    assert calls[-1][0][0] == chosen == recordings_root()
    assert load_settings()[0].recordings == str(chosen)
    assert main(["record", "CartPole-v1", "--episodes", "1", "--no-frames", "--seed", "0"]) == 0
    assert len(find_episodes(chosen / "CartPole-v1")) == 1
    # a file is not a recordings folder: refused, and the remembered folder stays
    afile = tmp_path / "notes.txt"
    afile.write_text("x")
    assert main(["launch", "--out", str(afile)]) == 2
    assert load_settings()[0].recordings == str(chosen)


def test_play_that_saves_nothing_leaves_no_folder(tmp_path):
    import pygame

    out = tmp_path / "recs"
    pygame.time.set_timer(pygame.QUIT, 200, 1)  # closing the window asks (one step played)
    discard = pygame.event.Event(pygame.KEYDOWN, key=pygame.K_d, mod=0, scancode=0, unicode="d")
    pygame.time.set_timer(discard, 400, 1)  # D: discard it and quit
    args = ["--countdown", "0", "--fps", "1"]
    try:
        rc = main(["play", "CartPole-v1", "--out", str(out), *args])
    finally:
        pygame.time.set_timer(discard, 0)
    assert rc == 0
    assert not out.exists()


def test_envs_lists_families_and_a_typo_gets_suggestions(capsys):
    assert main(["envs"]) == 0
    out = capsys.readouterr().out
    assert "classic control (" in out and "CartPole-v1" in out
    assert "Atari (" in out and "ALE/Pong-v5" in out and "MiniGrid, BabyAI (" in out
    assert main(["envs", "doorkey"]) == 0
    out = capsys.readouterr().out
    assert "MiniGrid-DoorKey-8x8-v0" in out and "CartPole" not in out
    assert main(["record", "CartPol-v1"]) == 2
    assert "did you mean CartPole-v1" in capsys.readouterr().err
    assert main(["record", "Acrobot-v1"]) == 2
    assert "record it with --policy random" in capsys.readouterr().err


def test_the_cli_sets_a_private_runtime_dir_before_sdl(tmp_path):
    """Headless runs print no "error: XDG_RUNTIME_DIR is invalid" (nor ALSA) lines."""
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_RUNTIME_DIR", "SDL_AUDIODRIVER")}
    env.update(XDG_DATA_HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path))
    code = "from demostudio.cli import main; raise SystemExit(main())"
    args = ["record", "CartPole-v1", "--episodes", "1", "--seed", "0", "--no-progress"]
    done = subprocess.run(
        [sys.executable, "-c", code, *args[:-1]], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "error" not in done.stderr.lower() and "ALSA" not in done.stderr, done.stderr
    runtime = private_runtime_dir()
    assert runtime.is_dir() and stat.S_IMODE(runtime.stat().st_mode) == 0o700


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


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", ["fifo", "folder", "nested", "huge", "not_utf8"])
def test_a_bad_settings_file_is_ignored_by_every_command(kind, tmp_path, monkeypatch, capsys):
    """launcher.json is read when the parser is built: a FIFO hung every command (even
    --help), deep nesting made every command a RecursionError traceback, a sparse 2 GB file
    was read whole (4 GB RSS) at every start."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    path = tmp_path / "config" / "demostudio" / "launcher.json"
    path.parent.mkdir(parents=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "nested":
        path.write_text("[" * 100_000 + "]" * 100_000)
    elif kind == "huge":
        with open(path, "wb") as f:
            f.truncate(2 * 1024**3)
    else:
        path.write_bytes(b'{"player": "\xff"}')
    settings, warning = load_settings()
    assert settings == Settings()
    assert warning.startswith(f"ignored {path}: expected ") and "\n" not in warning
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["ls", str(empty)]) in (0, 1)
    assert "Traceback" not in capsys.readouterr().err
    assert recordings_root() == default_recordings()


@pytest.mark.timeout(30)
def test_keymap_write_never_overwrites_an_episode_nor_waits_on_a_fifo(tmp_path, capsys):
    """`keymap ENV --write EP.h5` replaced an episode with JSON (exit 0), a FIFO hung, a
    folder was an IsADirectoryError traceback."""
    import h5py

    episode = tmp_path / "ep.h5"
    with h5py.File(episode, "w") as f:
        f.attrs["format"] = "demostudio-episode"
    before = episode.read_bytes()
    fifo = tmp_path / "keys.json"
    os.mkfifo(fifo)
    for target, expected in [
        (episode, "got an HDF5 file (an episode?): it is never overwritten"),
        (fifo, "got a special file (FIFO, device)"),
        (tmp_path, "got a folder"),
    ]:
        assert main(["keymap", "CartPole-v1", "--write", str(target)]) == 2
        err = capsys.readouterr().err
        assert err == (
            f"demostudio: error: --write {target}: expected a path for the key map JSON file, "
            f"{expected}\n"
        )
    assert episode.read_bytes() == before


def test_record_out_a_file_is_one_line_and_leaves_it(tmp_path, capsys):
    """`record ENV --out FILE` (a file where the recordings folder goes) was a
    NotADirectoryError traceback; watch --headless --record FILE the same."""
    mine = tmp_path / "notes.txt"
    mine.write_text("mine")
    argv = ["record", "CartPole-v1", "--out", str(mine), "--episodes", "1", "--no-frames"]
    assert main(argv) == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert err == (
        f"demostudio: error: {mine / 'CartPole-v1'}: expected a folder for the episodes, "
        "cannot make it (Not a directory)"
    )
    assert mine.read_text() == "mine"


def test_an_invisible_window_at_a_terminal_is_said(monkeypatch, capsys):
    """SDL_VIDEODRIVER=dummy set by the user: a window nobody sees would wait for keys; at a
    terminal that is one warning line (the tests, with no terminal, get none)."""
    from demostudio.ui.display import require_display

    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True, raising=False)
    require_display("`demostudio record ENV` plays headless")
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("demostudio: warning: SDL_VIDEODRIVER=dummy")
    assert "Ctrl-C ends it" in err[0] and "`demostudio record ENV` plays headless" in err[0]
    monkeypatch.setattr(sys.stdin, "isatty", lambda: False, raising=False)
    require_display()
    assert capsys.readouterr().err == ""

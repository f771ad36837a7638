"""A file name is shown with its control characters escaped: a name holding a newline cannot
forge a result line (``ok      fake.h5``), one holding ESC cannot drive the terminal."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from demostudio.cli import main

EVIL = "ep\nok      fake\x1b[2J.h5"
"""A name whose newline would start a forged ``validate`` line and whose ESC clears a screen."""


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    from demostudio.cli.record_cmd import RecordConfig, record

    out = tmp_path_factory.mktemp("names")
    cfg = RecordConfig(env="CartPole-v1", episodes=1, out=out, seed=0, policy="random")
    (path,) = record(cfg, progress=False)
    return path


@pytest.fixture
def folder(tmp_path, source, monkeypatch) -> Path:
    """``demos/`` with a good episode and an unreadable one, both with an evil name (and a
    ``.partial`` left by a crash with one); the working folder is ``tmp_path``."""
    monkeypatch.chdir(tmp_path)
    demos = tmp_path / "demos"
    (demos / "bad").mkdir(parents=True)
    shutil.copy(source, demos / EVIL)
    (demos / "bad" / EVIL).write_bytes(b"not an episode")
    (demos / "bad" / (EVIL + ".partial")).write_bytes(b"not an episode either")
    return demos


def _shown(argv: list[str], capsys) -> str:
    main([str(a) for a in argv])
    out = capsys.readouterr()
    text = out.out + out.err
    assert "Traceback" not in text
    return text


def _assert_escaped(text: str) -> None:
    assert "\x1b" not in text
    assert not any(line.startswith("ok      fake") for line in text.splitlines()), text
    assert "ep\\nok      fake\\x1b[2J." in text, text  # the name is there, escaped


@pytest.mark.parametrize(
    "argv",
    [
        ["validate", "{demos}"],
        ["validate", "{demos}/bad"],
        ["verify", "{demos}/{evil}"],  # with its progress bar, which names the file
        ["verify", "-q", "{demos}/bad"],
        ["info", "{demos}/bad/{evil}"],
        ["ls", "{demos}"],
        ["recover", "{demos}/bad"],
        ["tag", "{demos}/{evil}", "--add", "good"],
        ["compact", "{demos}/{evil}"],
        ["trim", "{demos}/{evil}", "--start", "1"],
        ["merge", "{demos}", "--out", "merged"],
        ["split", "{demos}", "--out", "split", "--validation", "0.5"],
        ["quality", "--no-progress", "{demos}"],
        ["export", "{demos}/{evil}", "--format", "gif"],
    ],
    ids=lambda argv: " ".join(a for a in argv if "{" not in a),
)
def test_every_line_showing_a_file_name_escapes_it(folder, argv, capsys):
    argv = [a.replace("{demos}", str(folder)).replace("{evil}", EVIL) for a in argv]
    _assert_escaped(_shown(argv, capsys))


def test_names_of_files_the_user_gave_are_escaped_in_error_lines_too(folder, capsys):
    text = _shown(["export", folder / "bad" / EVIL, "--format", "png"], capsys)
    assert "demostudio: error: " in text
    _assert_escaped(text)

"""``--help`` of every command and of every algorithm's ``demostudio train ALGO`` prints its
text and exits 0. The algorithms' help comes from their config docstrings, where a "10%"
once broke argparse's %-formatting with a traceback."""

from __future__ import annotations

import argparse
import dataclasses

import pytest

from agents.registry import algorithm_names, get_algorithm
from demostudio.cli import build_parser, main


def _command_names() -> list[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sorted(sub.choices)


@pytest.mark.parametrize("algo", algorithm_names())
def test_train_help_shows_every_flag(algo, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["train", algo, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    fields = [f for f in dataclasses.fields(get_algorithm(algo).config_cls) if f.init]
    shown = [f for f in fields if f.metadata.get("cli", True) is not False]
    assert shown
    for f in shown:
        name = f.name.replace("_", "-")
        assert f"--{name}" in out or f"--no-{name}" in out or f.name in out, f.name


@pytest.mark.parametrize("command", _command_names())
def test_command_help_exits_zero(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    assert "usage:" in capsys.readouterr().out

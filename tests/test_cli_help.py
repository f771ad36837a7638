"""``--help`` of every command and of every algorithm's ``demostudio train ALGO`` prints its
text and exits 0. The algorithms' help comes from their config docstrings, where a "10%"
once broke argparse's %-formatting with a traceback."""

from __future__ import annotations

import argparse
import dataclasses
import re
import subprocess
import sys

import pytest

from agents.registry import algorithm_names, get_algorithm
from demostudio.cli import build_parser, main
from demostudio.cli.dataclass_args import GROUP_ORDER, field_docs


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


HEAVY = ("torch", "ray", "matplotlib", "pygame", "ale_py", "minigrid", "tensorboard")
"""What a command loads when it runs, never to print its help or a flag error."""


def test_train_help_and_flag_errors_import_no_torch():
    """``train ALGO --help`` of every algorithm, and a mistyped flag, build their parser from
    the config alone: checked in a fresh interpreter, since this one has torch loaded."""
    probe = f"""
import sys
from demostudio.cli import main
from agents.registry import algorithm_names
heavy = {HEAVY!r}
for algo in algorithm_names():
    for argv in (["train", algo, "--help"], ["train", algo, "--totl-env-steps", "5"]):
        try:
            main(argv)
        except SystemExit:
            pass
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in heavy)
        print(" ".join(argv), loaded[:3])
"""
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    shown = [line for line in out.splitlines() if line.startswith("train ")]
    assert len(shown) == 2 * len(algorithm_names())
    assert [line for line in shown if not line.endswith("[]")] == []


@pytest.mark.parametrize("algo", algorithm_names())
def test_train_help_groups_every_flag_the_needed_groups_first(algo, capsys):
    with pytest.raises(SystemExit):
        main(["train", algo, "--help"])
    out = capsys.readouterr().out
    assert out.startswith(f"usage: demostudio train {algo} [-h] [options]\n")
    titles = re.findall(r"^(\S[^\n]*):\n", out, flags=re.M)
    heads = [t.split(":")[0] for t in titles[1:]]
    assert titles[0] == "options" and heads[:2] == ["run", "env"]
    assert ("demos" in heads) == ("--demos" in out)
    order = [GROUP_ORDER.index(h) for h in heads]
    assert order == sorted(order), titles  # every group is a known one, in GROUP_ORDER
    options = out.split("\noptions:\n", 1)[1].split("\n\n", 1)[0]
    assert options.split() == ["-h,", "--help", "show", "this", "help", "message", "and", "exit"]


def test_help_texts_say_what_a_value_does_not_its_history():
    for algo in algorithm_names():
        for name, doc in field_docs(get_algorithm(algo).config_cls).items():
            assert not re.search(r"\(was\b|\bpreviously\b|\bformerly\b", doc), (algo, name)


def test_registry_configs_are_the_agents_own():
    """The config the CLI parses with is the class the agent trains with (no second copy)."""
    probe = """
import sys
from agents.registry import algorithm_names, get_algorithm
configs = {a: get_algorithm(a).config_cls for a in algorithm_names()}
assert "torch" not in sys.modules
import agents.r2d3
assert agents.r2d3.R2D3.config_cls is configs["r2d3"] and agents.r2d3.config.R2D3Config
for a in algorithm_names():
    assert get_algorithm(a).agent_cls.config_cls is configs[a], a
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "ok", out.stderr


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["train", "R2D3"], "got 'R2D3' (did you mean 'r2d3'?)"),
        (["train", "r2d4"], "got 'r2d4' (did you mean 'r2d3'?)"),
        (["train", "RND_PPO"], "got 'RND_PPO' (did you mean 'rnd-ppo'?)"),
    ],
)
def test_a_mistyped_algorithm_names_the_closest(argv, expected, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].endswith(expected)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["record", "CartPole-v1", "--policy", "human"],
            "demostudio record: error: argument --policy: invalid choice: 'human' "
            "(choose from scripted, random)",
        ),
        (
            ["record", "CartPole-v1", "--policy", "scriptd"],
            "demostudio record: error: argument --policy: invalid choice: 'scriptd' "
            "(did you mean 'scripted'?)",
        ),
        (
            ["lss"],
            "demostudio: error: argument COMMAND: invalid choice: 'lss' (did you mean 'ls'?)",
        ),
        (
            ["evaluate", "run", "--episods", "3"],
            "demostudio evaluate: error: unrecognized arguments: --episods 3 "
            "(did you mean --episodes?)",
        ),
        (
            ["ls", "--frob"],
            "demostudio ls: error: unrecognized arguments: --frob "
            "(`demostudio ls --help` lists them)",
        ),
    ],
)
def test_usage_errors_are_one_line(argv, expected, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [expected] and captured.out == ""

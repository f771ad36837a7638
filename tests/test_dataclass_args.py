"""Flags generated from config dataclasses: types, defaults, help from field docstrings."""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pytest

from demostudio.cli.dataclass_args import add_dataclass_arguments, dataclass_from_args


@dataclass
class Example:
    """An example config."""

    paths: tuple[Path, ...] = field(default=(Path("demos"),), metadata={"positional": True})
    """Episode folders."""
    lr: float = 1e-3
    """Learning rate."""
    mode: Literal["fast", "slow"] = "fast"
    """How to run."""
    seed: int | None = None
    """Seed (none: random)."""
    verbose: bool = False
    """Print more."""
    sizes: tuple[int, ...] = (64, 64)
    """Hidden sizes."""


def _parse(argv: list[str]) -> tuple[Example, argparse.ArgumentParser]:
    parser = argparse.ArgumentParser()
    add_dataclass_arguments(parser, Example)
    return dataclass_from_args(Example, parser.parse_args(argv)), parser


def test_defaults_round_trip():
    cfg, _ = _parse([])
    assert cfg == Example()


def test_every_kind_of_field():
    cfg, _ = _parse(
        [
            "a",
            "b",
            "--lr",
            "0.5",
            "--mode",
            "slow",
            "--seed",
            "3",
            "--verbose",
            "--sizes",
            "8",
            "16",
            "32",
        ]
    )
    assert cfg.paths == (Path("a"), Path("b")) and cfg.lr == 0.5 and cfg.mode == "slow"
    assert cfg.seed == 3 and cfg.verbose is True and cfg.sizes == (8, 16, 32)
    cfg, _ = _parse(["--seed", "none", "--no-verbose"])
    assert cfg.seed is None and cfg.verbose is False


def test_help_comes_from_field_docstrings(capsys):
    _, parser = _parse([])
    text = parser.format_help()
    assert "Learning rate. (default: 0.001)" in text and "Hidden sizes." in text


def test_bad_values_are_argparse_errors(capsys):
    with pytest.raises(SystemExit):
        _parse(["--mode", "medium"])
    assert "invalid choice: 'medium'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        _parse(["--lr", "fast"])
    assert "invalid float value" in capsys.readouterr().err
    for text in ("nan", "inf", "-inf"):
        with pytest.raises(SystemExit):
            _parse([f"--lr={text}"])
        assert f"argument --lr: expected a finite number, got '{text}'" in capsys.readouterr().err


def test_seed_fields_are_bounded(capsys):
    """A field named seed takes 0 .. 2**63-1 (or none when optional); the bound and its
    reason are in schema.MAX_GIVEN_SEED."""
    assert _parse(["--seed", "0"])[0].seed == 0
    assert _parse(["--seed", str(2**63 - 1)])[0].seed == 2**63 - 1
    assert _parse(["--seed", "none"])[0].seed is None
    for text in ("-1", str(2**63), "1" + "0" * 30):
        with pytest.raises(SystemExit):
            _parse(["--seed", text])
        assert (
            f"argument --seed: expected a seed from 0 to {2**63 - 1} (2**63-1), got '{text}'"
            in (capsys.readouterr().err)
        )
    with pytest.raises(SystemExit):
        _parse(["--seed", "1.5"])
    assert "argument --seed: invalid int value: '1.5'" in capsys.readouterr().err


@dataclass
class Flat:
    """A config without positionals (like the training configs)."""

    lr: float = 1e-3
    """Learning rate."""
    verbose: bool = False
    """Print more."""
    demos: tuple[Path, ...] = ()
    """Episode folders."""
    out: Path | None = None
    """Output folder."""


def test_explicit_fields_are_the_flags_given():
    from demostudio.cli.dataclass_args import explicit_fields

    assert explicit_fields(Flat, []) == set()
    assert explicit_fields(Flat, ["--lr=0.1", "--no-verbose", "--demos", "a", "b"]) == {
        "lr",
        "verbose",
        "demos",
    }
    with pytest.raises(SystemExit):
        explicit_fields(Flat, ["--lr", "fast"])


def test_dataclass_from_values_restores_types_from_json():
    from demostudio.cli.dataclass_args import dataclass_from_values

    cfg = dataclass_from_values(
        Flat, {"lr": 0.5, "demos": ["a", "b"], "out": "runs/x", "algo": "ignored"}
    )
    assert cfg == Flat(lr=0.5, demos=(Path("a"), Path("b")), out=Path("runs/x"))
    assert dataclass_from_values(Flat, {"out": None}).out is None


def test_help_shows_every_default_booleans_included():
    _, parser = _parse([])
    text = " ".join(parser.format_help().split())
    assert "Print more. (default: --no-verbose)" in text
    assert "Learning rate. (default: 0.001)" in text


@dataclass
class Grouped:
    """A config with its fields under comment headers."""

    # --- network ---------------------------------------------------------------------------
    hidden: int = 64
    """Layer width."""
    # --- run -------------------------------------------------------------------------------
    steps: int = 10
    """Steps to run.

    # --- not a header: quoted in a docstring ---
    """
    seed: int = 0
    """Seed."""
    # --- algorithm: the loss ---------------------------------------------------------------
    margin: float = 0.8
    """Margin."""
    # --- extras ----------------------------------------------------------------------------
    verbose: bool = False
    """Print more."""
    out: Path | None = field(default=None, metadata={"positional": True})
    """Output."""


@dataclass
class GroupedChild(Grouped):
    """A subclass that changes defaults: its fields stay in their groups."""

    steps: int = 20
    # --- run -------------------------------------------------------------------------------
    lr: float = 0.1
    """Learning rate."""


def test_comment_headers_group_the_fields():
    from demostudio.cli.dataclass_args import field_layouts

    groups = {name: lay.group for name, lay in field_layouts(GroupedChild).items()}
    assert groups == {
        "hidden": "network",
        "steps": "run",
        "seed": "run",  # the line in the docstring above it is no header
        "margin": "algorithm: the loss",
        "verbose": "extras",
        "out": "extras",
        "lr": "run",
    }
    assert field_layouts(GroupedChild)["steps"].doc == "Steps to run. # --- not a header: " \
        "quoted in a docstring ---"  # fmt: skip


def test_help_lists_the_groups_in_order_under_a_short_usage():
    parser = argparse.ArgumentParser(prog="demo")
    add_dataclass_arguments(parser, GroupedChild)
    text = parser.format_help()
    assert text.startswith("usage: demo [-h] [options] [out]\n")
    titles = [line[:-1] for line in text.splitlines() if line.endswith(":") and line[0] != " "]
    # run first (GROUP_ORDER), then algorithm and its subgroups, then network, then the rest
    assert titles == ["positional arguments", "options", "run", "algorithm: the loss",
                      "network", "extras"]  # fmt: skip
    run = text.split("\nrun:\n", 1)[1].split("\n\n", 1)[0]
    assert re.findall(r"^  (--[a-z-]+)", run, flags=re.M) == ["--steps", "--seed", "--lr"]


def test_a_config_without_headers_keeps_one_list():
    parser = argparse.ArgumentParser(prog="demo")
    add_dataclass_arguments(parser, Flat)
    text = parser.format_help()
    assert "--lr LR" in text.split("options:", 1)[1] and "[options]" not in text


def test_an_argument_group_takes_the_flags_as_they_are():
    parser = argparse.ArgumentParser(prog="demo")
    add_dataclass_arguments(parser.add_argument_group("window"), Grouped)
    text = parser.format_help()
    assert "window:" in text and "\nrun:" not in text and "--margin" in text

"""The ``demostudio`` command. Each command group lives in its own module with a
``register(subparsers)`` function; modules import pygame, torch and agents lazily, inside the
command that needs them, so ``demostudio ls`` starts fast and works without a display."""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from demostudio.cli.dataclass_args import CommandParser, close_matches
from demostudio.cli.oserrors import os_error_line
from demostudio.episode import EpisodeError, UnknownEnvError
from demostudio.episode._h5 import os_errno
from demostudio.episode.attrs import printable
from demostudio.ui.display import NoDisplayError, prepare_sdl_environment

COMMAND_MODULES = (
    "demostudio.cli.library_cmds",
    "demostudio.cli.record_cmd",
    "demostudio.cli.play_cmds",
    "demostudio.cli.replay_cmds",
    "demostudio.cli.train_cmds",
    "demostudio.cli.coach_cmd",
    "demostudio.cli.compare_cmd",
    "demostudio.cli.data_cmds",
    "demostudio.cli.quality_cmds",
    "demostudio.cli.envs_cmd",
)
# The command run by a bare ``demostudio`` (registered by the play module).
DEFAULT_COMMAND = "launch"


class CommandError(Exception):
    """A user error: printed as ``demostudio: error: ...`` with exit status 2, no traceback."""


def refuse_sample_demos(path: Path | str | None, flag: str) -> None:
    """Outputs never go among the bundled sample demos (DESIGN): CommandError when ``path``
    (a folder or file to write; links and relative parts resolved) is the bundled demos
    folder or inside it. None: nothing to check."""
    from demostudio.assets import SAMPLE_DEMOS, in_sample_demos

    if path is not None and in_sample_demos(path):
        raise CommandError(
            f"{flag} {path}: expected a place outside {os.path.realpath(SAMPLE_DEMOS)}, the "
            "bundled sample demos folder (outputs never go among the sample demos)"
        )


def build_parser() -> argparse.ArgumentParser:
    parser = CommandParser(
        prog="demostudio",
        description="Play and record Gymnasium games, scrub episodes, learn from demonstrations.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    parser.set_defaults(commands=tuple(subparsers.choices))
    return parser


def _unrecognized(parser: argparse.ArgumentParser, args: argparse.Namespace, extra: list[str]):
    """Arguments no flag took: one line from the command's own parser (``demostudio ls:
    error: unrecognized arguments: --frob``), naming the flag a mistyped one looks like."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    command = sub.choices.get(getattr(args, "command", None) or "", parser)
    message = f"unrecognized arguments: {' '.join(extra)}"
    flags = [x.split("=", 1)[0] for x in extra if x.startswith("--")]
    known = [s for a in command._actions for s in a.option_strings if s.startswith("--")]
    close = close_matches(flags[0], known, n=1) if flags else []
    if close:
        message += f" (did you mean {close[0]}?)"
    command.error(message)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    prepare_sdl_environment()
    parser = build_parser()
    if not argv and DEFAULT_COMMAND in parser.get_default("commands"):
        argv = [DEFAULT_COMMAND]
    args, extra = parser.parse_known_args(argv)
    if extra:
        _unrecognized(parser, args, extra)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except (
        CommandError,
        EpisodeError,
        UnknownEnvError,
        FileNotFoundError,
        NoDisplayError,
    ) as exc:  # names from a folder scan or a file: control characters escaped
        print(printable(f"demostudio: error: {exc}"), file=sys.stderr)
        return 2
    except KeyboardInterrupt as stop:  # Ctrl-C; SIGTERM and SIGHUP where a command takes them
        print("demostudio: interrupted", file=sys.stderr)
        return 128 + getattr(stop, "signum", signal.SIGINT)  # 130 for Ctrl-C
    except BrokenPipeError:  # e.g. `demostudio ls | head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:  # after FileNotFoundError and BrokenPipeError: a path the user gave
        line = os_error_line(exc)
        if line is None:
            raise
        print(printable(f"demostudio: error: {line}"), file=sys.stderr)
        return 2
    except RuntimeError as exc:  # h5py's failed write (tag, trim, import): errno in its text
        code = os_errno(exc)
        line = os_error_line(OSError(code, str(exc))) if code else None
        if line is None:
            raise
        print(printable(f"demostudio: error: {line}"), file=sys.stderr)
        return 2


__all__ = ["COMMAND_MODULES", "CommandError", "build_parser", "main", "refuse_sample_demos"]

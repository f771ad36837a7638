"""``demostudio play ENV_ID`` (keyboard play, every episode saved) and ``demostudio launch``
(the launcher window, what a bare ``demostudio`` opens). pygame is imported inside the
commands."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path

from demostudio.cli import refuse_sample_demos
from demostudio.cli.dataclass_args import add_dataclass_arguments, dataclass_from_args
from demostudio.ui.display import require_display
from demostudio.ui.settings import recordings_root


@dataclass
class LaunchConfig:
    """Open the launcher: pick a game, set the player, play or open the replay viewer."""

    out: Path = field(default_factory=recordings_root)
    """Your recordings folder (counted per game; new episodes go here); a folder given here is
    remembered for the next launch, play and record."""
    player: str = ""
    """Player name to start with (default: your login name)."""


PLAY_INSTEAD = "`demostudio record ENV` records episodes of a scripted or random player"


def _no_window(exc: Exception, instead: str = ""):
    from demostudio.cli import CommandError
    from demostudio.ui.display import no_window_hint

    return CommandError(f"cannot open a window: {exc} ({no_window_hint(instead)})")


def _remove_if_empty(folders: list[Path]) -> None:
    """A play that saved nothing leaves none of the folders it created behind."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:  # not empty, or already gone
            pass


def cmd_play(args: argparse.Namespace) -> int:
    import pygame

    from demostudio.cli import CommandError
    from demostudio.episode import ensure_registered, env_folder_name
    from demostudio.play import KeyMapError, PlayConfig, run_play

    cfg = dataclass_from_args(PlayConfig, args)
    refuse_sample_demos(cfg.out, "--out")
    ensure_registered(cfg.env)
    require_display(PLAY_INSTEAD)
    new_folders = [p for p in (cfg.out / env_folder_name(cfg.env), cfg.out) if not p.exists()]
    try:
        result = run_play(cfg)
    except KeyMapError as exc:
        raise CommandError(str(exc)) from None
    except ValueError as exc:
        if "expected" not in str(exc):
            raise
        raise CommandError(str(exc)) from None
    except pygame.error as exc:
        raise _no_window(exc, PLAY_INSTEAD) from None
    finally:
        pygame.display.quit()
        _remove_if_empty(new_folders)
    for path in result.saved:
        print(path)
    print(
        f"{len(result.saved)} episode(s) saved, {result.discarded} discarded",
        f"under {cfg.out}" if cfg.record else "(recording off)",
    )
    return 0


@dataclass
class KeymapConfig:
    """Show the key map a game is played with, or write it out as a --keymap template."""

    env: str = field(metadata={"positional": True})
    """Gymnasium env id."""
    keymap: Path | None = None
    """Check this key map file against the env instead of the default one."""
    env_kwargs: str = ""
    """Extra gymnasium.make keyword arguments as JSON, e.g. '{"continuous": true}'."""
    write: Path | None = None
    """Write the key map as JSON to this file (edit it, then play with --keymap FILE)."""


def cmd_keymap(args: argparse.Namespace) -> int:
    import json

    from demostudio.cli import CommandError
    from demostudio.episode import make_env_with_kwargs
    from demostudio.episode.attrs import printable
    from demostudio.episode.hostile import output_file_problem
    from demostudio.play.config import PlayConfig
    from demostudio.play.envclose import close_env
    from demostudio.play.keymap import KeyMapError, resolve_keymap

    cfg = dataclass_from_args(KeymapConfig, args)
    refuse_sample_demos(cfg.write, "--write")
    try:
        kwargs = PlayConfig(env=cfg.env, env_kwargs=cfg.env_kwargs).make_kwargs()
        env = make_env_with_kwargs(cfg.env, kwargs)
    except ValueError as exc:  # EnvKwargsError too: the env refused them
        raise CommandError(str(exc)) from None
    try:
        km = resolve_keymap(env, cfg.env, cfg.keymap)
    except KeyMapError as exc:
        raise CommandError(str(exc)) from None
    finally:
        close_env(env)
    if cfg.write is not None:
        problem = output_file_problem(cfg.write, "a path for the key map JSON file")
        if problem is not None:
            raise CommandError(f"--write {cfg.write}: {problem}")
        try:
            cfg.write.parent.mkdir(parents=True, exist_ok=True)
            cfg.write.write_text(json.dumps(km.to_document(), indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            raise CommandError(
                f"--write {cfg.write}: cannot write it ({exc.strerror or exc})"
            ) from None
        print(f"wrote {cfg.write}")
        return 0
    print(f"{cfg.env}: key map from {km.source}")
    rows = km.help_rows()
    width = max(len(k) for k, _ in rows)
    for keys, label in rows:  # a label from a user's file: no escape reaches the terminal
        print(f"  {keys.ljust(width)}  {printable(label)}")
    print(f"  {'(no key)'.ljust(width)}  action {km.noop}")
    return 0


def cmd_launch(args: argparse.Namespace) -> int:
    import pygame

    from demostudio.launcher import run_launcher
    from demostudio.ui.settings import remember_recordings

    cfg = dataclass_from_args(LaunchConfig, args)
    refuse_sample_demos(cfg.out, "--out")  # never remembered as the recordings folder
    if cfg.out.exists() and not cfg.out.is_dir():  # never remembered as the recordings folder
        from demostudio.cli import CommandError

        raise CommandError(f"--out {cfg.out}: expected a folder for your recordings, got a file")
    require_display()
    if cfg.out.absolute() != recordings_root().absolute():
        remember_recordings(cfg.out)
    try:
        run_launcher(cfg.out, player=cfg.player)
    except pygame.error as exc:
        raise _no_window(exc) from None
    finally:
        pygame.display.quit()
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    from demostudio.play.config import PlayConfig

    p = subparsers.add_parser(
        "play",
        help="play a game with the keyboard; every episode is saved",
        description=(
            "Play a Gymnasium game with the keyboard; every episode is saved to "
            "OUT/<env>/ the moment it ends. Keys: F1/H help, P pause, Backspace discard and "
            "restart, End end and save now, Esc or closing the window quits (with an episode "
            "in progress it asks: Enter/S saves it, D discards it, Esc goes back to the game; "
            "closing the window again saves it), F12 screenshot, +/- zoom."
        ),
    )
    add_dataclass_arguments(p, PlayConfig)
    p.set_defaults(func=cmd_play)
    p = subparsers.add_parser(
        "keymap", help="show a game's key map or write it out as a --keymap template"
    )
    add_dataclass_arguments(p, KeymapConfig)
    p.set_defaults(func=cmd_keymap)
    p = subparsers.add_parser(
        "launch", help="open the launcher window (what a bare `demostudio` does)"
    )
    add_dataclass_arguments(p, LaunchConfig)
    p.set_defaults(func=cmd_launch)

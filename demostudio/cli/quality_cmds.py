"""Demo quality commands: ``trim`` (a range of an episode as a new episode that still
verifies) and ``quality`` (facts and flags per episode of a folder, with a command for each
flag)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from demostudio.cli.dataclass_args import add_dataclass_arguments, dataclass_from_args
from demostudio.episode.attrs import printable


@dataclass
class TrimConfig:
    """Write a range of an episode as a new episode (it verifies: the steps before it are kept
    as prefix actions; its notes name the source)."""

    file: Path = field(metadata={"positional": True})
    """The episode file to trim (never modified)."""
    start: int | None = None
    """First frame to keep (0 = the reset frame; negative counts from the end)."""
    end: int | None = None
    """Last frame to keep, inclusive (default: the last frame)."""
    idle: bool = False
    """Also cut the idle runs at the start and end of the range (no key held, NOOP, or an
    action held with zero reward)."""
    out: Path | None = None
    """The new file (default: FILE_trim<start>-<end>.h5 beside FILE; for a bundled sample
    demo, in the recordings folder of its env)."""


@dataclass
class QualityConfig:
    """Per episode: length, return, idle start/end, actions, who acted, verification;
    outliers and duplicates within the folder; a command for each flagged file. A file that
    cannot be read gets its own line, the others are still assessed, and the exit status
    is 1."""

    paths: tuple[Path, ...] = field(metadata={"positional": True})
    """Episode files or folders."""
    verify: bool = False
    """Also verify each episode by re-simulation (slow: runs the env)."""
    json: bool = False
    """Print JSON (one object with every episode) instead of a table."""
    progress: bool = True
    """Show a progress bar (on stderr)."""


def cmd_trim(args: argparse.Namespace) -> int:
    from demostudio.cli import CommandError, refuse_sample_demos
    from demostudio.episode.trim import trim_episode
    from demostudio.ui.settings import derived_output_folder

    cfg = dataclass_from_args(TrimConfig, args)
    refuse_sample_demos(cfg.out, "--out")
    if cfg.file.is_dir():
        raise CommandError(f"{cfg.file}: expected an episode file, got a folder")
    folder = None if cfg.out else derived_output_folder(cfg.file)
    try:
        r = trim_episode(
            cfg.file, start=cfg.start, end=cfg.end, idle=cfg.idle, out=cfg.out, out_folder=folder
        )
    except OSError as exc:  # the output folder cannot be written (the source is untouched)
        where = cfg.out or folder or cfg.file.parent
        raise CommandError(f"{where}: cannot write the trimmed episode: {exc}") from None
    cut = f" ({r.idle_cut[0]} idle steps cut at the start, {r.idle_cut[1]} at the end)"
    print(
        printable(
            f"wrote {r.path}: frames {r.start}..{r.end} of {cfg.file}, {r.length} steps"
            + cut * cfg.idle
        )
    )
    return 0


def _histogram_text(actions: dict[str, int] | None) -> str:
    if not actions:
        return "-"
    total = sum(actions.values()) or 1
    return " ".join(f"{k.split(' ')[0]}:{100 * v / total:.0f}%" for k, v in actions.items())


def cmd_quality(args: argparse.Namespace) -> int:
    from demostudio.cli import CommandError
    from demostudio.cli.table import format_table
    from demostudio.episode.quality import assess

    cfg = dataclass_from_args(QualityConfig, args)
    for p in cfg.paths:
        if not os.path.lexists(p):  # a link to a special file or a loop is that file's line
            raise CommandError(f"{p}: no such episode file or folder")
    bar = None
    if cfg.progress and cfg.verify:
        from tqdm import tqdm

        bar = tqdm(desc="quality", unit="ep", file=sys.stderr)

    def progress(done: int, total: int) -> None:
        if bar is not None:
            bar.total = total
            bar.update(done - bar.n)

    try:
        items = assess(list(cfg.paths), verify=cfg.verify, progress=progress)
    finally:
        if bar is not None:
            bar.close()
    flagged = [q for q in items if q.flags]
    unreadable = 1 if any(q.error is not None for q in items) else 0
    if cfg.json:
        print(json.dumps({"episodes": [q.as_json() for q in items]}, indent=2))
        return unreadable
    if not items:
        print(printable(f"no episodes under {', '.join(map(str, cfg.paths))}"))
        return 0
    header = ["file", "length", "return", "idle start", "idle end", "human", "actions"]
    if cfg.verify:
        header.append("verify")
    rows = []
    for q in items:
        if q.error is not None:
            rows.append([str(q.path), "BAD FILE", q.error[:60], "", "", "", ""])
            continue
        start, end = q.idle_share
        human = f"{q.human_share:.0%}" + (f" ({q.takeovers} takeovers)" if q.takeovers else "")
        row = [
            str(q.path),
            str(q.length),
            f"{q.total_return:.4g}",
            f"{start:.0%}",
            f"{end:.0%}",
            human,
            _histogram_text(q.actions),
        ]
        if cfg.verify:
            row.append("ok" if q.verified else "DIVERGES")
        rows.append(row)
    print(format_table(header, rows))
    print()
    if not flagged:
        print(f"{len(items)} episode(s), nothing flagged")
        return unreadable
    print(f"{len(flagged)} of {len(items)} episode(s) flagged:")
    for q in flagged:
        for f in q.flags:
            print(printable(f"  {q.path}: {f.kind}: {f.detail}"))
            if f.command:
                print(printable(f"    {f.command}"))
    return unreadable


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "trim", help="write a range of an episode as a new episode (still verifies)"
    )
    add_dataclass_arguments(p, TrimConfig)
    p.set_defaults(func=cmd_trim)

    p = subparsers.add_parser(
        "quality", help="flag idle, outlier, duplicate and diverging episodes of a folder"
    )
    add_dataclass_arguments(p, QualityConfig)
    p.set_defaults(func=cmd_quality)

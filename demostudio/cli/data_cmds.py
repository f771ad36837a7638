"""Data commands: ``import`` (a Minari dataset -> episode files), ``merge`` and ``split``
(new episode folders, with filters by tag, controller, player, env and return).

``demostudio export DIR --format minari`` (the replay/export commands) is the other way."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

from demostudio.cli import refuse_sample_demos
from demostudio.cli.dataclass_args import add_dataclass_arguments, dataclass_from_args
from demostudio.episode.attrs import printable
from demostudio.ui.settings import recordings_root


@dataclass
class ImportConfig:
    """Import a Minari dataset as episode files."""

    dataset: str = field(metadata={"positional": True})
    """A local Minari dataset id (NAMESPACE/NAME-v0) or the path of a dataset folder."""
    out: Path = field(default_factory=recordings_root)
    """Root folder; episodes go to OUT/<env id with / as ->/. Your recordings folder unless
    given."""
    frames: bool = True
    """Re-render frames by re-simulating from each episode's seed when the dataset has none."""


@dataclass(kw_only=True)
class FilterConfig:
    """Episode filters shared by merge and split (every given one must hold)."""

    # ---- filters ----
    tag: tuple[str, ...] = ()
    """Keep episodes that have all of these tags."""
    exclude_tag: tuple[str, ...] = ()
    """Drop episodes that have any of these tags."""
    controller: str | None = None
    """Keep episodes whose controller matches this glob (keyboard, policy:*)."""
    player: str | None = None
    """Keep episodes whose player matches this glob."""
    env: str | None = None
    """Keep episodes whose env id matches this glob (ALE/*)."""
    min_return: float | None = None
    """Keep episodes whose return is at least this."""


@dataclass(kw_only=True)
class MergeConfig(FilterConfig):
    """Copy the episodes of several folders (those passing the filters) into a new folder."""

    sources: tuple[Path, ...] = field(metadata={"positional": True})
    """Episode files or folders to read (never modified)."""
    out: Path
    """The new folder (must not exist, or be empty)."""


@dataclass(kw_only=True)
class SplitConfig(FilterConfig):
    """Split episodes into OUT/train and OUT/validation by episode, seeded, per env."""

    sources: tuple[Path, ...] = field(metadata={"positional": True})
    """Episode files or folders to read (never modified)."""
    out: Path
    """The new folder (must not exist, or be empty)."""
    validation: float = 0.2
    """Fraction of each env's episodes that go to validation."""
    seed: int = 0
    """Seed of the shuffle (same seed and inputs, same split)."""


def _filter(cfg: FilterConfig):
    from demostudio.interop.folders import EpisodeFilter

    return EpisodeFilter(
        tags=tuple(cfg.tag),
        exclude_tags=tuple(cfg.exclude_tag),
        controller=cfg.controller,
        player=cfg.player,
        env=cfg.env,
        min_return=cfg.min_return,
    )


def _report_selection(selection) -> int:
    """Print what was left out; the exit status: 1 when a file was skipped as unreadable
    (the output holds the others, but not everything asked for)."""
    for path, error in selection.unreadable:
        print(printable(f"skipped unreadable {path}: {error}"), file=sys.stderr)
    if selection.rejected:
        print(f"{selection.rejected} episode(s) did not match the filters")
    return 1 if selection.unreadable else 0


def cmd_import(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from demostudio.interop.minari import import_minari

    cfg = dataclass_from_args(ImportConfig, args)
    refuse_sample_demos(cfg.out, "--out")
    bars: list[tqdm] = []  # shown from the first episode on: a refused dataset gets one line

    def progress(done: int, total: int) -> None:
        if not bars:
            bars.append(tqdm(desc=printable(f"import {cfg.dataset}"), unit="ep", total=total))
        bars[0].update(done - bars[0].n)

    try:
        paths = import_minari(
            cfg.dataset,
            cfg.out,
            rerender_frames=cfg.frames,
            progress=progress,
            note=lambda msg: tqdm.write(printable(f"note: {msg}"), file=sys.stderr),
        )
    finally:
        for bar in bars:
            bar.close()
    folder = paths[0].parent if paths else cfg.out
    print(printable(f"imported {len(paths)} episode(s) into {folder}"))
    return 0


def cmd_merge(args: argparse.Namespace) -> int:
    from demostudio.interop.folders import merge

    cfg = dataclass_from_args(MergeConfig, args)
    refuse_sample_demos(cfg.out, "--out")
    result = merge(list(cfg.sources or ()), cfg.out, _filter(cfg))
    status = _report_selection(result.selection)
    dup = f" ({result.duplicates} identical duplicate(s) copied once)" if result.duplicates else ""
    print(printable(f"merged {len(result.files)} episode(s) into {cfg.out}{dup}"))
    return status


def cmd_split(args: argparse.Namespace) -> int:
    from demostudio.interop.folders import split

    cfg = dataclass_from_args(SplitConfig, args)
    refuse_sample_demos(cfg.out, "--out")
    result = split(
        list(cfg.sources or ()), cfg.out, validation=cfg.validation, seed=cfg.seed, flt=_filter(cfg)
    )
    status = _report_selection(result.selection)
    print(
        printable(
            f"split {len(result.train) + len(result.validation)} episode(s) into {cfg.out}: "
            f"{len(result.train)} train, {len(result.validation)} validation (seed {cfg.seed})"
        )
    )
    return status


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "import", help="import a Minari dataset as episode files (frames re-rendered)"
    )
    add_dataclass_arguments(p, ImportConfig)
    p.set_defaults(func=cmd_import)

    p = subparsers.add_parser(
        "merge", help="copy episodes of several folders (filtered) into a new folder"
    )
    add_dataclass_arguments(p, MergeConfig)
    p.set_defaults(func=cmd_merge)

    p = subparsers.add_parser(
        "split", help="split episodes into train / validation folders (seeded, by episode)"
    )
    add_dataclass_arguments(p, SplitConfig)
    p.set_defaults(func=cmd_split)

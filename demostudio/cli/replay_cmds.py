"""``demostudio replay PATH...`` (the episode viewer) and ``demostudio export FILE``."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from demostudio.cli import CommandError, refuse_sample_demos
from demostudio.cli.dataclass_args import add_dataclass_arguments, dataclass_from_args
from demostudio.episode.attrs import printable
from demostudio.episode.schema import FPS_RANGE, fps_in_range
from demostudio.ui.display import require_display


@dataclass
class ReplayConfig:
    """Scrub episodes like a video: play, step, seek, tag, verify and export."""

    paths: list[Path] = field(metadata={"positional": True})
    """Episode files and/or folders of them; none opens your recordings folder."""


@dataclass
class ExportConfig:
    """Export an episode's frames as MP4, GIF or PNGs, or episodes as a Minari dataset."""

    paths: list[Path] = field(metadata={"positional": True})
    """The episode file (mp4/gif/png), or episode files and folders (minari)."""
    # --- output ----------------------------------------------------------------------------
    format: Literal["mp4", "gif", "png", "minari"] = "mp4"
    """Output format."""
    out: Path | None = None
    """Output file (a folder for png; for minari the datasets root, default
    $MINARI_DATASETS_PATH); default exports/<name>."""
    # --- video and images ------------------------------------------------------------------
    start: int | None = None
    """First frame to export (0 = the reset frame; negative counts from the end)."""
    end: int | None = None
    """Last frame to export, inclusive (default: the last frame)."""
    fps: float | None = None
    """Frames per second of the video (default: the episode's stored frame rate)."""
    scale: float = 1.0
    """Resize factor (nearest neighbour)."""
    # --- minari ----------------------------------------------------------------------------
    dataset_id: str | None = None
    """Minari only: the dataset id, NAMESPACE/NAME-v0."""
    frames: bool = False
    """Minari only: include the rendered frames in the dataset."""
    # --- output ----------------------------------------------------------------------------
    progress: bool = True
    """Show a progress bar."""


def cmd_replay(args: argparse.Namespace) -> int:
    from demostudio.episode import find_episodes, find_partials
    from demostudio.ui.settings import recordings_root

    cfg = dataclass_from_args(ReplayConfig, args)
    paths = list(cfg.paths) or [recordings_root()]
    for p in cfg.paths:
        if not p.exists():
            raise CommandError(f"{p}: no such episode file or folder")
    paths = [p for p in paths if p.exists()]
    recording = any(p.is_dir() and find_partials(p) for p in paths)
    if not paths or not (find_episodes(paths) or recording):
        shown = ", ".join(map(str, cfg.paths or [recordings_root()]))
        raise CommandError(
            f"{shown}: expected episode files (*.h5), found none (`demostudio play ENV` records "
            "some; the shipped samples open with `demostudio replay demos`)"
        )
    require_display("ls, info, verify and export read the episodes")
    from demostudio.replay import run_viewer

    run_viewer(paths)
    return 0


def _export_minari(cfg: ExportConfig) -> int:
    if not cfg.dataset_id:
        raise CommandError("--format minari: expected --dataset-id NAMESPACE/NAME-v0, got none")
    try:
        from demostudio.interop.minari import export_minari
    except ImportError as exc:
        raise CommandError(
            f"--format minari: expected the module demostudio.interop.minari, it is not "
            f"available ({exc})"
        ) from None
    for p in cfg.paths:
        if not p.exists():
            raise CommandError(f"{p}: no such episode file or folder")
    from demostudio.cli.progress import LazyBar

    # drawn at the first episode written: a refused dataset id or input gets one line
    with LazyBar(desc="export minari", unit="episode", disable=not cfg.progress) as bar:
        out = export_minari(
            list(cfg.paths), cfg.dataset_id, frames=cfg.frames, out=cfg.out, progress=bar
        )
    print(printable(f"wrote Minari dataset {cfg.dataset_id} to {out}"))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    cfg = dataclass_from_args(ExportConfig, args)
    minari_root = cfg.format == "minari"  # its default is Minari's datasets root
    refuse_sample_demos(cfg.out or (None if minari_root else "exports"), "--out")
    if not cfg.paths:
        raise CommandError("export: expected an episode FILE, got none")
    if cfg.format == "minari":
        return _export_minari(cfg)
    if len(cfg.paths) != 1:
        raise CommandError(
            f"export --format {cfg.format}: expected one episode file, got {len(cfg.paths)} paths"
        )
    path = cfg.paths[0]
    if not path.is_file():
        raise CommandError(f"{path}: expected an episode file, got a folder or nothing")
    if not cfg.scale > 0:
        raise CommandError(f"--scale: expected a number > 0, got {cfg.scale}")
    if cfg.fps is not None and not fps_in_range(cfg.fps):
        raise CommandError(f"--fps: expected a number {FPS_RANGE}, got {cfg.fps}")
    from demostudio.cli.progress import LazyBar
    from demostudio.export import export_episode

    with LazyBar(desc=f"export {cfg.format}", unit="frame", disable=not cfg.progress) as bar:
        try:
            result = export_episode(
                path,
                cfg.format,
                cfg.out,
                start=cfg.start,
                end=cfg.end,
                fps=cfg.fps,
                scale=cfg.scale,
                progress=bar,
            )
        except RuntimeError as exc:
            raise CommandError(str(exc)) from None
    width, height = result.size
    print(
        printable(
            f"wrote {result.path}: frames {result.frames.start}..{result.frames.end} "
            f"({result.frames.count} frames), {width}x{height}, {result.fps:g} fps"
        )
    )
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("replay", help="scrub episodes like a video (opens a window)")
    add_dataclass_arguments(p, ReplayConfig)
    p.set_defaults(func=cmd_replay)
    p = subparsers.add_parser("export", help="export an episode as mp4/gif/png, or to Minari")
    add_dataclass_arguments(p, ExportConfig)
    p.set_defaults(func=cmd_export)

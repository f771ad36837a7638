"""Export a range of an episode's frames as a video, a GIF or a PNG sequence."""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from demostudio.episode import EpisodeError, open_episode
from demostudio.episode.hostile import output_file_problem
from demostudio.episode.schema import FPS_RANGE, fps_in_range

from .framing import FrameRange, resolve_range, scale_frame, scaled_size, stored_fps
from .writers import FORMATS, open_writer


@dataclass(frozen=True)
class ExportResult:
    path: Path
    """The video / GIF file, or the folder of PNGs."""
    frames: FrameRange
    """Which episode frames were written (inclusive)."""
    size: tuple[int, int]
    """Output (width, height); an MP4 of odd size is padded by one pixel to even."""
    fps: float


def default_output(path: Path, fmt: str, frames: FrameRange, n_frames: int) -> Path:
    """``exports/<episode stem>[_<start>-<end>].<fmt>`` (a folder for png)."""
    name = Path(path).name.removesuffix(".h5")
    if frames != (0, n_frames - 1):
        name += f"_{frames.start}-{frames.end}"
    return Path("exports") / (name if fmt == "png" else f"{name}.{fmt}")


def check_target(target: Path, fmt: str, source: Path) -> None:
    """An export never overwrites an episode (the one exported, or any HDF5 file: ffmpeg is
    run with -y) and never writes into a FIFO or device (it would wait forever); a video goes
    to a file path, PNG frames to a folder. EpisodeError naming the target otherwise."""
    if fmt == "png":
        if target.exists() and not target.is_dir():
            raise EpisodeError(
                target, None, "--out: expected a folder for the PNG frames, got a file"
            )
        return
    want = f"a path for the {fmt} file"
    try:
        same = target.exists() and os.path.samefile(target, source)
    except OSError:
        same = False
    if same:
        raise EpisodeError(
            target,
            None,
            f"--out: expected {want}, got the episode being exported: it is never overwritten",
        )
    problem = output_file_problem(target, want)
    if problem is not None:
        raise EpisodeError(target, None, f"--out: {problem}")


MAX_EXPORT_SIDE = 4096
"""The largest exported frame's side in pixels (4K video): a mistyped --scale of 1e6 would
otherwise ask for terabytes of frames and run for hours."""


def export_episode(
    path: str | os.PathLike,
    fmt: str,
    out: str | os.PathLike | None = None,
    *,
    start: int | None = None,
    end: int | None = None,
    fps: float | None = None,
    scale: float = 1.0,
    progress: Callable[[int, int], None] | None = None,
) -> ExportResult:
    """Write frames ``start..end`` (inclusive, default all T+1) of the episode at ``path``.

    ``fps`` defaults to the episode's stored frame rate; ``scale`` resizes with nearest
    neighbour. ``progress(done, total)`` is called after each frame."""
    if fmt not in FORMATS:
        raise ValueError(f"expected an export format in {FORMATS}, got {fmt!r}")
    path = Path(path)
    with open_episode(path) as ep:
        if not ep.has_frames:
            raise EpisodeError(path, "frames", "expected recorded frames to export, there are none")
        frames = resolve_range(ep.summary, start, end)
        rate = stored_fps(ep.summary) if fps is None else float(fps)
        if not fps_in_range(rate):
            raise ValueError(f"expected fps {FPS_RANGE}, got {rate}")
        height, width = ep.frame_shape[:2]
        size = scaled_size(width, height, scale)
        if max(size) > MAX_EXPORT_SIDE:
            most = MAX_EXPORT_SIDE / max(width, height)
            raise EpisodeError(
                path, None, f"--scale {scale:g}: expected frames at most {MAX_EXPORT_SIDE} "
                f"pixels a side, so at most --scale {math.floor(most * 1000) / 1000:g} for "
                f"these {width}x{height} frames",
            )  # fmt: skip
        target = Path(out) if out is not None else default_output(path, fmt, frames, len(ep) + 1)
        check_target(target, fmt, path)
        if fmt != "png":
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise EpisodeError(
                    target, None, f"--out: cannot make its folder ({exc.strerror or exc})"
                ) from None
        # a video is written beside its target and renamed once complete: an interrupted or
        # failed export leaves an earlier one at the target as it was
        partial = None if fmt == "png" else target.with_name(target.name + ".partial")
        writer = open_writer(fmt, target, size, rate, frames.start, partial)
        try:
            try:
                for done, i in enumerate(range(frames.start, frames.end + 1), start=1):
                    writer.write(scale_frame(ep.frame(i), size))
                    if progress is not None:
                        progress(done, frames.count)
            finally:
                writer.close()
            if partial is not None:
                os.replace(partial, target)
        finally:
            if partial is not None:
                with contextlib.suppress(OSError):  # e.g. a name too long to exist
                    partial.unlink(missing_ok=True)
        out_size = getattr(writer, "size", size)
    return ExportResult(target, frames, out_size, rate)

"""What to export: the frame range, the frame rate and the output size. Pure numpy."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from demostudio.episode import EpisodeError, EpisodeSummary, ensure_registered
from demostudio.episode.schema import fps_in_range

DEFAULT_FPS = 30.0
"""Used when neither the episode nor its env class states a frame rate."""


class FrameRange(NamedTuple):
    """Frames ``start..end`` of an episode, both inclusive (frame 0 is the reset)."""

    start: int
    end: int

    @property
    def count(self) -> int:
        return self.end - self.start + 1


def resolve_range(
    summary: EpisodeSummary, start: int | None = None, end: int | None = None
) -> FrameRange:
    """Check ``start``/``end`` against the episode's T+1 frames. Negative values count from
    the end (-1 is the last frame); ``None`` means the first / the last frame."""
    n = summary.length + 1
    first = 0 if start is None else (start + n if start < 0 else start)
    last = n - 1 if end is None else (end + n if end < 0 else end)
    if not 0 <= first < n:
        raise EpisodeError(
            summary.path, "start", f"expected a frame index in 0..{n - 1}, got {start}"
        )
    if not 0 <= last < n:
        raise EpisodeError(summary.path, "end", f"expected a frame index in 0..{n - 1}, got {end}")
    if last < first:
        raise EpisodeError(
            summary.path, "end", f"expected end >= start ({first}), got {end} (frame {last})"
        )
    return FrameRange(first, last)


def stored_fps(summary: EpisodeSummary) -> float:
    """The episode's frame rate: the recording's ``fps`` (checked on read), else the env
    class's ``metadata["render_fps"]`` when in the range a file may state, else
    :data:`DEFAULT_FPS`."""
    if summary.fps is not None:
        return float(summary.fps)
    try:
        import gymnasium

        ensure_registered(summary.env_id)
        entry = gymnasium.spec(summary.env_id).entry_point
        cls = (
            gymnasium.envs.registration.load_env_creator(entry) if isinstance(entry, str) else entry
        )
        fps = getattr(cls, "metadata", {}).get("render_fps")
    except Exception:  # an env that is not installed still replays at the default rate
        fps = None
    return float(fps) if fps_in_range(fps) else DEFAULT_FPS


def scaled_size(width: int, height: int, scale: float) -> tuple[int, int]:
    """``(width, height)`` times ``scale``, at least one pixel each way."""
    if not scale > 0:
        raise ValueError(f"expected a scale > 0, got {scale}")
    return max(1, round(width * scale)), max(1, round(height * scale))


def scale_frame(frame: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Nearest-neighbour resize of an [H, W, 3] frame to ``size`` = (width, height): keeps
    pixel art (Atari sprites) sharp and never blends colours."""
    height, width = frame.shape[:2]
    if (width, height) == size:
        return frame
    rows = np.minimum((np.arange(size[1]) + 0.5) * height / size[1], height - 1).astype(np.intp)
    cols = np.minimum((np.arange(size[0]) + 0.5) * width / size[0], width - 1).astype(np.intp)
    return frame[rows[:, None], cols[None, :]]


def pad_even(frame: np.ndarray) -> np.ndarray:
    """Repeat the last row / column so both sides are even (H.264 in yuv420p needs it)."""
    height, width = frame.shape[:2]
    if height % 2 == 0 and width % 2 == 0:
        return frame
    return np.pad(frame, ((0, height % 2), (0, width % 2), (0, 0)), mode="edge")

"""Reading episode files: a lazy summary, random access to single steps and frames, and whole
arrays for training."""

import os
from pathlib import Path

import numpy as np

from . import _h5
from .attrs import CONTROL
from .episode_file import EpisodeFile
from .records import EpisodeData, EpisodeSummary, StepRecord, StepScalars
from .schema import PARTIAL_SUFFIX, SUFFIX, EpisodeError

__all__ = [
    "EpisodeData",
    "EpisodeFile",
    "EpisodeSummary",
    "StepRecord",
    "StepScalars",
    "find_episodes",
    "find_partials",
    "load_episode",
    "open_episode",
    "read_summary",
    "running_returns",
    "update_metadata",
]


def running_returns(rewards: np.ndarray) -> np.ndarray:
    """[T+1] float64: the return before each step and, last, the episode's return.

    Summed in step order, as the writer's running ``total_return`` is, so both overflow to
    ``inf`` at the same step: finite rewards near the float64 limit are valid, and their sum
    is then ``inf`` rather than a warning from numpy."""
    out = np.zeros(len(rewards) + 1, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        np.cumsum(rewards, dtype=np.float64, out=out[1:])
    return out


def open_episode(path: str | os.PathLike) -> EpisodeFile:
    """Open an episode lazily (use as a context manager)."""
    return EpisodeFile(path)


def load_episode(path: str | os.PathLike, frames: bool = False) -> EpisodeData:
    """Read a whole episode into memory."""
    with EpisodeFile(path) as ep:
        return ep.load(frames=frames)


def read_summary(path: str | os.PathLike) -> EpisodeSummary:
    with EpisodeFile(path) as ep:
        return ep.summary


def find_episodes(
    paths: str | os.PathLike | list[str | os.PathLike], recursive: bool = True
) -> list[Path]:
    """Episode files (``*.h5``) in the given files and folders, sorted by path.

    A folder is searched recursively; ``.partial`` files are never included. Every name that
    is not a folder is included, a FIFO, a device or a link to nowhere too, so that opening
    it reports what it is (:func:`~demostudio.episode.hostile.open_h5`) rather than it
    vanishing from a listing. A path that does not exist raises FileNotFoundError naming it."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            pattern = f"**/*{SUFFIX}" if recursive else f"*{SUFFIX}"
            out.extend(q for q in p.glob(pattern) if not q.is_dir())
        elif os.path.lexists(p):
            out.append(p)
        else:
            raise FileNotFoundError(f"{p}: no such episode file or folder")
    return sorted(set(out))


def find_partials(folder: str | os.PathLike) -> list[Path]:
    return sorted(Path(folder).glob(f"**/*{PARTIAL_SUFFIX}"))


def update_metadata(
    path: str | os.PathLike, *, tags: list[str] | None = None, notes: str | None = None
) -> None:
    """Change an episode's tags and notes in place (the only metadata that is editable).
    A tag with a control character (an escape sequence, a newline, a bidi override) is
    refused: EpisodeError naming ``tags``, nothing written."""
    with EpisodeFile(path, mode="r+") as ep:
        if tags is not None:
            clean = sorted({str(t).strip() for t in tags if str(t).strip()})
            for tag in clean:
                if CONTROL.search(tag):
                    raise EpisodeError(
                        path, "tags", f"expected tags without control characters, got {tag!r}"
                    )
            _h5.write_attrs(ep.h5, {"tags": clean})
        if notes is not None:
            _h5.write_attrs(ep.h5, {"notes": str(notes)})
        ep.h5.flush()

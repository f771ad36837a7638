"""What export and import share: the optional ``minari`` import, where datasets live, and the
names DemoStudio adds to a Minari dataset.

Layout of an exported dataset (on top of Minari's own)
------------------------------------------------------
``infos["frame"]``              (T+1, H, W, 3) uint8 RGB frames, only with ``frames=True``:
                                lossless (never JPEG), one frame per HDF5 chunk, gzip level 1
``infos["_demostudio"]``        per-step data Minari has no field for:
    ``timestamps``              (T+1,) float64 wall-clock seconds
    ``keys``                    (T+1,) text: JSON list of held keys (row 0, the reset: ``[]``)
    ``info_present/<key>``      (T+1,) bool, only for info keys some step lacked
episode attribute ``demostudio``  JSON text: the episode file's root attributes plus
                                ``source_file`` (its file name)
metadata ``demostudio_export``  ``{"schema_version", "frames_info_key", "episodes"}``

Minari stores image observations raw because export always passes ``jpeg_encoding=False``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from demostudio.episode import EpisodeError

FRAME_KEY = "frame"
EXTRA_KEY = "_demostudio"
EPISODE_ATTR = "demostudio"
METADATA_KEY = "demostudio_export"


def require_minari() -> ModuleType:
    """The ``minari`` module, or a clear error saying how to install it."""
    try:
        import minari
    except ImportError:
        raise EpisodeError(
            "minari",
            None,
            "expected the minari package for Minari import/export, it is not installed "
            "(pip install 'demostudio[minari]')",
        ) from None
    return minari


def datasets_root(out: Path | None = None) -> Path:
    """Where Minari datasets live: ``out``, else ``$MINARI_DATASETS_PATH``, else
    ``~/.minari/datasets``."""
    if out is not None:
        return Path(out)
    env = os.environ.get("MINARI_DATASETS_PATH")
    return Path(env) if env else Path.home() / ".minari" / "datasets"


@contextlib.contextmanager
def using_root(root: Path) -> Iterator[None]:
    """Point Minari at ``root`` for the duration (Minari reads the env var on every call)."""
    old = os.environ.get("MINARI_DATASETS_PATH")
    os.environ["MINARI_DATASETS_PATH"] = str(root)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("MINARI_DATASETS_PATH", None)
        else:
            os.environ["MINARI_DATASETS_PATH"] = old


def check_dataset_id(dataset_id: str) -> None:
    """Raise EpisodeError unless ``dataset_id`` is ``(NAMESPACE/)NAME-vN``."""
    from minari.dataset.minari_dataset import parse_dataset_id

    try:
        _, _, version = parse_dataset_id(dataset_id)
    except (ValueError, TypeError):
        version = None
    if version is None:
        raise EpisodeError(
            dataset_id,
            "dataset_id",
            f"expected a Minari dataset id like NAMESPACE/NAME-v0, got {dataset_id!r}",
        )

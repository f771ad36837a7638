"""New episode folders from existing ones: filter, merge, split into train / validation.

Sources are only read: files are copied (``shutil.copy2``), never moved or modified. The new
folder is built under a hidden temporary name next to its destination and renamed into place
at the end, so a failure leaves no half-made folder. Layout: ``OUT/<env folder>/<file>``
(``OUT/train/...`` and ``OUT/validation/...`` for a split) plus ``OUT/manifest.json`` saying
where every file came from and how it was selected."""

from __future__ import annotations

import filecmp
import fnmatch
import json
import os
import secrets
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from demostudio.episode import EpisodeError, EpisodeSummary, env_folder_name, scan

MANIFEST = "manifest.json"
SPLIT_NAMES = ("train", "validation")


@dataclass(frozen=True)
class EpisodeFilter:
    """Which episodes to keep. Every given criterion must hold; globs use ``fnmatch``."""

    tags: tuple[str, ...] = ()
    """Keep episodes that have all of these tags."""
    exclude_tags: tuple[str, ...] = ()
    """Drop episodes that have any of these tags."""
    controller: str | None = None
    """Glob on the controller, e.g. ``keyboard`` or ``policy:*``."""
    player: str | None = None
    """Glob on the player."""
    env: str | None = None
    """Glob on the env id, e.g. ``ALE/*``."""
    min_return: float | None = None
    """Keep episodes whose return is at least this."""

    def matches(self, s: EpisodeSummary) -> bool:
        tags = set(s.tags)
        return (
            all(t in tags for t in self.tags)
            and not any(t in tags for t in self.exclude_tags)
            and (self.controller is None or fnmatch.fnmatchcase(s.controller, self.controller))
            and (self.player is None or fnmatch.fnmatchcase(s.player, self.player))
            and (self.env is None or fnmatch.fnmatchcase(s.env_id, self.env))
            and (self.min_return is None or s.total_return >= self.min_return)
        )

    def describe(self) -> str:
        parts = [f"{k}={v!r}" for k, v in asdict(self).items() if v not in (None, ())]
        return ", ".join(parts) or "all episodes"


@dataclass(frozen=True)
class Selection:
    """The episodes of some sources that pass a filter."""

    episodes: tuple[EpisodeSummary, ...]
    rejected: int
    """Readable episodes the filter dropped."""
    unreadable: tuple[tuple[Path, str], ...]
    """Files that could not be read (path, error); they are skipped, never copied."""


def select(sources: list[Path], flt: EpisodeFilter = EpisodeFilter()) -> Selection:
    """The readable episodes under ``sources`` that ``flt`` keeps, sorted by path."""
    if not sources:
        raise EpisodeError("sources", None, "expected at least one episode file or folder")
    for src in sources:
        if not Path(src).exists():
            raise EpisodeError(src, None, "expected an episode file or folder, it does not exist")
    kept, unreadable, rejected = [], [], 0
    for entry in scan(sources):
        if entry.summary is None:
            if not entry.partial:
                unreadable.append((entry.path, entry.error or "unreadable"))
            continue
        if flt.matches(entry.summary):
            kept.append(entry.summary)
        else:
            rejected += 1
    return Selection(tuple(kept), rejected, tuple(unreadable))


def _check_out(out: Path, sources: list[Path]) -> None:
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise EpisodeError(out, None, "expected a new or empty output folder, it has files")
    resolved = out.resolve()
    for src in sources:
        s = Path(src).resolve()
        if resolved == s or s in resolved.parents or resolved in s.parents:
            raise EpisodeError(
                out, None, f"expected an output folder outside the source {src}, got one inside"
            )


class _Builder:
    """Copies episodes into a hidden staging folder, then renames it to ``out``."""

    def __init__(self, out: Path):
        self.out = Path(out)
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self.staging = self.out.parent / f".{self.out.name}.tmp-{secrets.token_hex(4)}"
        self.staging.mkdir()
        self.records: list[dict[str, str]] = []
        self.duplicates = 0

    def add(self, s: EpisodeSummary, subfolder: str = "") -> Path | None:
        """Copy one episode; None when an identical file is already there."""
        folder = self.staging / subfolder / env_folder_name(s.env_id)
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / s.path.name
        n = 1
        while target.exists():
            if filecmp.cmp(target, s.path, shallow=False):
                self.duplicates += 1
                return None
            target = folder / f"{s.path.name[: -len('.h5')]}-{n}.h5"
            n += 1
        shutil.copy2(s.path, target)
        rel = target.relative_to(self.staging)
        self.records.append({"file": rel.as_posix(), "source": str(s.path)})
        return self.out / rel

    def finish(self, manifest: dict) -> None:
        manifest = {**manifest, "files": self.records, "duplicates_skipped": self.duplicates}
        (self.staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        if self.out.exists():
            self.out.rmdir()  # checked empty before
        os.replace(self.staging, self.out)

    def abort(self) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)


def _nonempty(selection: Selection, sources: list[Path], flt: EpisodeFilter) -> None:
    if not selection.episodes:
        where = ", ".join(map(str, sources))
        raise EpisodeError(
            where,
            None,
            f"expected episodes matching {flt.describe()}, found none "
            f"({selection.rejected} filtered out, {len(selection.unreadable)} unreadable)",
        )


@dataclass(frozen=True)
class MergeResult:
    files: tuple[Path, ...]
    selection: Selection
    duplicates: int
    """Byte-identical files found in more than one source, copied once."""


def merge(sources: list[Path], out: Path, flt: EpisodeFilter = EpisodeFilter()) -> MergeResult:
    """Copy the episodes of ``sources`` that pass ``flt`` into the new folder ``out``."""
    sources = [Path(s) for s in sources]
    selection = select(sources, flt)
    _nonempty(selection, sources, flt)
    _check_out(out, sources)
    builder = _Builder(out)
    try:
        files = [p for s in selection.episodes if (p := builder.add(s)) is not None]
        builder.finish(
            {
                "operation": "merge",
                "sources": [str(s) for s in sources],
                "filter": asdict(flt),
            }
        )
    except BaseException:
        builder.abort()
        raise
    return MergeResult(tuple(files), selection, builder.duplicates)


@dataclass(frozen=True)
class SplitResult:
    train: tuple[Path, ...]
    validation: tuple[Path, ...]
    selection: Selection


def split_indices(n: int, validation: float, rng: np.random.Generator) -> np.ndarray:
    """Which of ``n`` episodes go to validation: a seeded draw of ``round(n * validation)``,
    at least one when ``validation > 0`` and ``n >= 2``, never all of them."""
    k = round(n * validation)
    if validation > 0 and n >= 2:
        k = max(k, 1)
    k = min(k, n - 1) if n >= 2 else 0
    return np.sort(rng.permutation(n)[:k])


def split(
    sources: list[Path],
    out: Path,
    *,
    validation: float = 0.2,
    seed: int = 0,
    flt: EpisodeFilter = EpisodeFilter(),
) -> SplitResult:
    """Split the episodes of ``sources`` that pass ``flt`` into ``out/train`` and
    ``out/validation`` by episode, separately for each env (so each env is in both), with a
    seeded ``numpy`` generator: the same inputs and seed give the same split."""
    if not 0.0 <= validation < 1.0:
        raise EpisodeError(
            "validation", "validation", f"expected a fraction in [0, 1), got {validation}"
        )
    sources = [Path(s) for s in sources]
    selection = select(sources, flt)
    _nonempty(selection, sources, flt)
    _check_out(out, sources)
    rng = np.random.default_rng(seed)
    by_env: dict[str, list[EpisodeSummary]] = {}
    for s in selection.episodes:
        by_env.setdefault(s.env_id, []).append(s)
    builder = _Builder(out)
    parts: dict[str, list[Path]] = {name: [] for name in SPLIT_NAMES}
    try:
        for env_id in sorted(by_env):
            episodes = by_env[env_id]
            chosen = set(split_indices(len(episodes), validation, rng).tolist())
            for i, s in enumerate(episodes):
                name = SPLIT_NAMES[1] if i in chosen else SPLIT_NAMES[0]
                path = builder.add(s, name)
                if path is not None:
                    parts[name].append(path)
        builder.finish(
            {
                "operation": "split",
                "sources": [str(s) for s in sources],
                "filter": asdict(flt),
                "validation": validation,
                "seed": seed,
            }
        )
    except BaseException:
        builder.abort()
        raise
    return SplitResult(tuple(parts["train"]), tuple(parts["validation"]), selection)

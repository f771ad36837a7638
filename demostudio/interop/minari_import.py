"""A Minari dataset -> DemoStudio episode files.

Everything is written into a hidden temporary folder next to the destination and moved into
place only when every episode succeeded, so a failed import leaves nothing behind. Episodes
that DemoStudio exported come back exactly (attributes, timestamps, keys, absent infos,
frames); others get their env metadata from the recreated env, and frames re-rendered by
re-simulation from the stored seed when that reproduces the stored steps."""

from __future__ import annotations

import json
import re
import secrets
import shutil
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from demostudio.episode import (
    EpisodeError,
    EpisodeWriter,
    env_folder_name,
    index_nested,
)
from demostudio.episode.attrs import check_type
from demostudio.episode.envs import spec_differences

from .codec import flatten, info_row, rows, text
from .minari_source import Source, open_source
from .minari_store import EPISODE_ATTR, EXTRA_KEY, require_minari
from .resimulate import Diverged, Resimulation

_LOSSY_NOTE = (
    " Its image observations were stored JPEG-encoded (lossy) and are imported as decoded."
)
# Mean absolute difference (0..255) up to which a JPEG-decoded image observation matches the
# re-simulated one.
JPEG_TOLERANCE = 8.0
# Root attributes the writer sets itself (or that only describe the old file).
_WRITER_ATTRS = (
    "format",
    "schema_version",
    "flushed_steps",
    "observation_space",
    "action_space",
    "length",
    "total_return",
    "terminated",
    "truncated",
    "source_file",
)


def _file_name(src: Source, index: int, ours: dict[str, Any]) -> str:
    name = ours.get("source_file")
    if isinstance(name, str) and re.fullmatch(r"[\w.-]+\.h5", name):
        return name
    stem = re.sub(r"[^\w.-]+", "-", src.dataset_id).strip("-")
    return f"{stem}-ep{index:05d}.h5"


def _attrs(src: Source, index: int, meta: dict[str, Any], ours: dict[str, Any]) -> dict[str, Any]:
    if ours:
        return {k: v for k, v in ours.items() if k not in _WRITER_ATTRS}
    return {
        **src.env_attrs,
        "seed": _seed(src, index, meta.get("seed")),
        "reset_options": meta.get("options"),
        "controller": f"minari:{src.algorithm}" if src.algorithm else "minari",
        "player": ", ".join(src.authors),
        "key_map": None,
        "fps": None,
        "recorded_at": datetime.now(timezone.utc).astimezone().isoformat(),
        "tags": [],
        "notes": f"Imported from Minari dataset {src.dataset_id}, episode {index}."
        + (_LOSSY_NOTE if src.lossy_images else ""),
        "source": {"minari_dataset": src.dataset_id, "episode": index},
    }


def _checked(src: Source, where: str, key: str, value: Any) -> Any:
    """``value`` if it has the type root attribute ``key`` of an episode file must have, else
    EpisodeError naming ``where/key`` in the dataset."""
    try:
        return check_type(src.where, key, value)
    except EpisodeError as exc:
        raise EpisodeError(src.where, f"{where}/{key}", exc.reason) from None


def _seed(src: Source, index: int, seed: Any) -> int | None:
    """Episode ``index``'s reset seed (Minari stores an HDF5 integer, read as numpy's),
    checked as an episode file's: gymnasium refuses a negative one."""
    if isinstance(seed, np.integer):
        seed = int(seed)
    return _checked(src, f"episode_{index}", "seed", seed)


def _check_rows(src: Source, episode: Any) -> None:
    n = len(episode.rewards)
    where = f"episode_{episode.id}"
    expected = {
        "observations": (episode.observations, n + 1),
        "actions": (episode.actions, n),
        "terminations": (episode.terminations, n),
        "truncations": (episode.truncations, n),
    }
    for name, (value, want) in expected.items():
        got = rows(value)
        if got != want:
            raise EpisodeError(src.where, f"{where}/{name}", f"expected {want} rows, got {got}")
    for name, column in flatten(dict(episode.infos or {})).items():
        if len(column) != n + 1:
            raise EpisodeError(
                src.where, f"{where}/infos/{name}", f"expected {n + 1} rows, got {len(column)}"
            )


def _ours(src: Source, episode_id: int, raw: Any) -> dict[str, Any]:
    """The attributes a DemoStudio export embedded in episode ``episode_id``, checked as an
    episode file's are: they become the imported file's, and its ``env_id`` is the env a
    re-simulation makes (a "module:Env" id would import that module)."""
    field = f"episode_{episode_id}/{EPISODE_ATTR}"
    try:
        ours = json.loads(text(raw))
    except (ValueError, RecursionError) as exc:
        raise EpisodeError(src.where, field, f"expected JSON text ({exc})") from None
    if not isinstance(ours, dict):
        raise EpisodeError(src.where, field, f"expected a JSON object, got {type(ours).__name__}")
    for key, value in ours.items():
        _checked(src, field, key, value)
    if "env_id" in ours:
        for key, reason in spec_differences(ours["env_id"], ours.get("env_spec")):
            raise EpisodeError(src.where, f"{field}/env_spec.{key}", reason)
    return ours


class _Episode:
    """One Minari episode, split into what the writer takes."""

    def __init__(self, src: Source, episode: Any, meta: dict[str, Any]):
        _check_rows(src, episode)
        self.episode = episode
        self.length = len(episode.rewards)
        raw = meta.get(EPISODE_ATTR)
        self.ours = _ours(src, episode.id, raw) if raw is not None else {}
        infos = dict(episode.infos or {})
        extra = infos.pop(EXTRA_KEY, None) if self.ours else None
        self.frames = infos.pop(src.frames_key, None) if src.frames_key else None
        self.infos = flatten(infos)
        extra = extra or {}
        self.present = flatten(extra.get("info_present") or {})
        self.timestamps = extra.get("timestamps")
        keys = extra.get("keys")
        self.keys = [json.loads(text(k)) for k in keys[1:]] if keys is not None else None
        actors = extra.get("actors")
        self.actors = [text(a) for a in actors[1:]] if actors is not None else None
        if self.actors is not None and (len(self.actors) != self.length or not all(self.actors)):
            raise EpisodeError(
                src.where,
                f"episode_{episode.id}/infos/{EXTRA_KEY}/actors",
                f"expected {self.length + 1} rows naming who took each step, got "
                f"{len(self.actors) + 1} rows with {sum(not a for a in self.actors)} empty",
            )

    def info(self, i: int) -> dict[str, Any]:
        return info_row(self.infos, self.present, i)

    def timestamp(self, i: int) -> float | None:
        return float(self.timestamps[i]) if self.timestamps is not None else None

    def write(
        self,
        path: Path,
        src: Source,
        attrs: dict[str, Any],
        resim: Resimulation | None,
    ) -> None:
        """Write the episode; frames from the dataset, or rendered by ``resim``."""
        ep = self.episode
        frames = self.frames is not None or resim is not None
        writer = EpisodeWriter(
            path, src.observation_space, src.action_space, attrs, record_frames=frames
        )
        try:
            first = resim.first_frame if resim is not None else None
            if self.frames is not None:
                first = np.asarray(self.frames[0], dtype=np.uint8)
            writer.reset(index_nested(ep.observations, 0), self.info(0), first, self.timestamp(0))
            for t in range(self.length):
                obs = index_nested(ep.observations, t + 1)
                action = index_nested(ep.actions, t)
                reward, term, trunc = (
                    float(ep.rewards[t]),
                    bool(ep.terminations[t]),
                    bool(ep.truncations[t]),
                )
                if self.frames is not None:
                    frame = np.asarray(self.frames[t + 1], dtype=np.uint8)
                elif resim is not None:
                    frame = resim.step(t, action, obs, reward, term, trunc)
                else:
                    frame = None
                if self.actors is not None and self.actors[t] != writer.actor:
                    writer.set_actor(self.actors[t])  # who acted comes back step by step
                writer.step(
                    action,
                    obs,
                    reward,
                    term,
                    trunc,
                    self.info(t + 1),
                    frame,
                    self.timestamp(t + 1),
                    keys=self.keys[t] if self.keys is not None else (),
                )
        except BaseException:
            writer.discard()
            raise
        writer.close()


def _import_episode(
    src: Source,
    index: int,
    episode: Any,
    meta: dict[str, Any],
    folder: Path,
    rerender_frames: bool,
    note: Callable[[str], None],
) -> Path:
    item = _Episode(src, episode, meta)
    attrs = _attrs(src, index, meta, item.ours)
    path = folder / _file_name(src, index, item.ours)
    if path.exists():
        raise EpisodeError(path, None, "expected a unique file name, two episodes share it")
    if item.frames is not None or not rerender_frames:
        item.write(path, src, attrs, None)
        return path
    seed = attrs.get("seed")
    problem = None
    if seed is None:
        problem = "the dataset stores no reset seed for this episode"
    else:
        resim = None
        try:
            resim = Resimulation(
                attrs,
                seed,
                attrs.get("reset_options"),
                index_nested(episode.observations, 0),
                JPEG_TOLERANCE if src.lossy_images else None,
            )
            item.write(path, src, attrs, resim)
            return path
        except Diverged as exc:
            problem = str(exc)
        finally:
            if resim is not None:
                resim.close()
    message = f"frames left out: {problem}."
    notes = str(attrs.get("notes") or "")
    attrs = {**attrs, "notes": f"{notes} {message}".strip()}
    item.write(path, src, attrs, None)
    note(f"episode {index}: {message}")
    return path


def import_minari(
    dataset_id_or_path: str,
    out_dir: Path,
    *,
    rerender_frames: bool = True,
    progress: Callable[[int, int], None] | None = None,
    note: Callable[[str], None] | None = None,
) -> list[Path]:
    """Import a Minari dataset (a local id, or the path of a dataset folder) into
    ``out_dir/<env folder>/`` as episode files; returns their paths.

    Frames: taken from a DemoStudio export when it has them; otherwise, with
    ``rerender_frames``, re-rendered by re-simulating each episode from its stored seed. When
    that is impossible (no seed, a different observation on the way) the episode is imported
    without frames, with the reason in its ``notes`` and passed to ``note``. A dataset whose
    spaces or env cannot be recreated raises EpisodeError and imports nothing."""
    minari = require_minari()
    src = open_source(minari, str(dataset_id_or_path))
    if src.lossy_images and note is not None:
        note(f"{src.dataset_id}: {_LOSSY_NOTE.strip()}")
    final = Path(out_dir) / env_folder_name(str(src.env_attrs["env_id"]))
    created = [p for p in (final, *final.parents) if not p.exists()]
    final.mkdir(parents=True, exist_ok=True)
    staging = final / f".import-{secrets.token_hex(4)}"
    staging.mkdir()
    done = False
    written: list[Path] = []
    try:
        dataset = src.dataset
        indices = [int(i) for i in dataset.episode_indices]
        metas = list(dataset.storage.get_episode_metadata(indices))
        for n, (index, meta, episode) in enumerate(
            zip(indices, metas, dataset.iterate_episodes(indices))
        ):
            written.append(
                _import_episode(
                    src, index, episode, meta, staging, rerender_frames, note or (lambda _: None)
                )
            )
            if progress is not None:
                progress(n + 1, len(indices))
        clashes = [p.name for p in written if (final / p.name).exists()]
        if clashes:
            raise EpisodeError(
                final / clashes[0],
                None,
                f"expected new episode files, {len(clashes)} already exist in {final} "
                f"(imported before?)",
            )
        moved = []
        for p in written:
            target = final / p.name
            p.rename(target)
            moved.append(target)
        done = True
        return moved
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if not done:  # leave no empty folders behind either
            for folder in created:
                try:
                    folder.rmdir()
                except OSError:
                    break

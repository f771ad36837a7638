"""Episode files -> a Minari dataset that ``minari.load_dataset`` loads and samples.

One episode is in memory at a time: the dataset is created with the first episode and grown
with ``MinariDataset.update_dataset_from_buffer``. A failed export removes what it wrote: the
dataset, and the namespace folders and files Minari made for its id."""

from __future__ import annotations

import json
import os
import shutil
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from demostudio.episode import (
    SCHEMA_VERSION,
    EpisodeError,
    EpisodeFile,
    EpisodeSummary,
    find_episodes,
    read_summary,
    space_to_json,
)
from demostudio.episode.envs import check_env_spec, episode_env

from .codec import info_column, nest, to_minari
from .minari_store import (
    EPISODE_ATTR,
    EXTRA_KEY,
    FRAME_KEY,
    METADATA_KEY,
    check_dataset_id,
    datasets_root,
    require_minari,
    using_root,
)

# Env id prefixes whose env comes from a plugin package, for the dataset's requirements.
_PLUGIN_PACKAGES = (("ALE/", "ale-py"), ("MiniGrid-", "minigrid"), ("BabyAI-", "minigrid"))
# Minari's data file in an "hdf5" dataset folder (minari.dataset._storages.hdf5_storage).
_MINARI_HDF5 = "main_data.hdf5"
# What Minari writes in each namespace folder of a dataset id (minari.namespace).
NAMESPACE_METADATA = "namespace_metadata.json"
# Root attributes that describe the file, not the episode (rewritten on import).
_FILE_ATTRS = ("format", "schema_version", "flushed_steps")


def _summaries(paths: list[Path]) -> list[EpisodeSummary]:
    files = find_episodes(list(paths))
    if not files:
        raise EpisodeError(
            ", ".join(map(str, paths)), None, "expected episode files (*.h5), found none"
        )
    # A zero-step episode has no transition to export (Minari needs at least one step).
    summaries = [s for s in map(read_summary, files) if s.length > 0]
    if not summaries:
        raise EpisodeError(files[0], "length", "expected an episode with at least one step")
    first = summaries[0]
    for s in summaries[1:]:
        if s.env_id != first.env_id:
            raise EpisodeError(
                s.path,
                "env_id",
                f"expected every episode of one dataset to share the env {first.env_id!r} "
                f"(from {first.path.name}), got {s.env_id!r}",
            )
        for key in ("observation_space", "action_space"):
            mine, theirs = getattr(s, key), getattr(first, key)
            if space_to_json(mine) != space_to_json(theirs):
                raise EpisodeError(
                    s.path, key, f"expected {theirs} (as in {first.path.name}), got {mine}"
                )
    return summaries


def _env(summaries: list[EpisodeSummary]) -> Any:
    """The env Minari records the dataset's spec from: the installed registry's env for the
    episodes' id, made with the first one's ``env_kwargs`` (plain data), once every file's
    stored spec names the registry's code (:func:`check_env_spec`). Minari makes whatever a
    spec it is handed names, so it is handed this env, never a spec from a file."""
    for s in summaries:
        check_env_spec(s.path, s.attrs)
    return episode_env(summaries[0].path, summaries[0].attrs)


def _requirements(summary: EpisodeSummary) -> list[str]:
    versions = summary.attrs.get("versions") or {}
    names = ["gymnasium"] + [pkg for pre, pkg in _PLUGIN_PACKAGES if summary.env_id.startswith(pre)]
    return [f"{name}=={versions[name]}" for name in names if name in versions]


def _buffer(minari: Any, ep: EpisodeFile) -> Any:
    """One episode as a Minari ``EpisodeBuffer`` (plus our extras in ``infos``; frames are
    added afterwards by :func:`_add_frames`)."""
    s = ep.summary
    data = ep.load(frames=False)
    infos: dict[str, Any] = {name: info_column(col) for name, col in data.infos.items()}
    for reserved in (FRAME_KEY, EXTRA_KEY):
        if reserved in infos or any(n.startswith(reserved + "/") for n in infos):
            raise EpisodeError(
                ep.path,
                f"infos/{reserved}",
                f"expected no info key {reserved!r}: the Minari export uses it",
            )
    present = data.info_present
    extra: dict[str, Any] = {
        "timestamps": np.asarray(data.timestamps, dtype=np.float64),
        "keys": ["[]"] + [json.dumps(k) for k in data.keys],
        # who took the step that led to each observation ("person:ann", "policy:r2d3", ...)
        "actors": [""] + [data.actor_names[i] for i in data.actors],
    }
    if present:
        extra["info_present"] = nest(present)
    nested = nest(infos)
    nested[EXTRA_KEY] = extra
    seed = s.seed
    return minari.data_collector.EpisodeBuffer(
        seed=int(seed) if seed is not None else None,
        options=s.attrs.get("reset_options") or None,
        observations=to_minari(s.observation_space, data.observations),
        actions=to_minari(s.action_space, data.actions),
        rewards=np.asarray(data.rewards, dtype=np.float64),
        terminations=np.asarray(data.terminations, dtype=bool),
        truncations=np.asarray(data.truncations, dtype=bool),
        infos=nested,
    )


def _check_frames(summaries: list[EpisodeSummary]) -> None:
    for s in summaries:
        with EpisodeFile(s.path) as ep:
            if not ep.has_frames:
                raise EpisodeError(
                    s.path,
                    "frames",
                    "expected frames to export (--frames), this episode was recorded without",
                )


def _add_frames(data_path: Path, index: int, ep: EpisodeFile) -> None:
    """Write the episode's frames as ``infos/frame`` of Minari episode ``index``, one frame
    at a time (never the whole episode in memory), one frame per chunk, deflate level 1:
    lossless, and about 70x smaller than Minari's uncompressed arrays for Atari. h5py (and
    so Minari) reads it like any other dataset."""
    import h5py

    main = data_path / _MINARI_HDF5
    if not main.exists():
        raise EpisodeError(main, None, "expected Minari's HDF5 data file, it is missing")
    n = ep.summary.length + 1
    shape = ep.frame_shape
    with h5py.File(main, "a") as f:
        infos = f[f"episode_{index}"].require_group("infos")
        ds = infos.create_dataset(
            FRAME_KEY,
            shape=(n, *shape),
            dtype=np.uint8,
            chunks=(1, *shape),
            compression="gzip",
            compression_opts=1,
        )
        for i in range(n):
            ds[i] = ep.frame(i)


def _episode_attr(ep: EpisodeFile) -> str:
    attrs = {k: v for k, v in ep.attrs.items() if k not in _FILE_ATTRS}
    attrs["source_file"] = ep.path.name
    return json.dumps(attrs)


def _made_by_export(root: Path, target: Path) -> list[Path]:
    """What exporting the dataset ``target`` (in the datasets ``root``) may add that is not
    there yet, deepest first: the folders of its id's namespaces, the root and its parents,
    and the ``namespace_metadata.json`` Minari writes in each namespace folder."""
    made = []
    for folder in target.parents:
        if not folder.exists():
            made.append(folder)
        elif root in folder.parents and not os.path.lexists(folder / NAMESPACE_METADATA):
            made.append(folder / NAMESPACE_METADATA)  # a namespace folder that exists
    return made


def _remove(made: list[Path]) -> None:
    """Remove what :func:`_made_by_export` listed after a failed export: the files, and the
    folders once Minari's namespace file is gone and nothing else is in them."""
    for path in made:
        try:
            if path.is_dir() and not path.is_symlink():
                (path / NAMESPACE_METADATA).unlink(missing_ok=True)
                path.rmdir()
            else:
                path.unlink(missing_ok=True)
        except OSError:
            continue


def export_minari(
    paths: list[Path],
    dataset_id: str,
    *,
    frames: bool = False,
    out: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Path:
    """Write the episodes in ``paths`` (files or folders) as the Minari dataset ``dataset_id``.

    ``out`` is the Minari datasets root (default: ``$MINARI_DATASETS_PATH`` or
    ``~/.minari/datasets``); the dataset goes to ``out/dataset_id``, which is returned.
    ``frames=True`` adds the RGB frames losslessly (gzip) as ``infos["frame"]``. Every episode must
    share one env and one pair of spaces. Author = the players, algorithm name = the
    controllers, both from the recording metadata."""
    minari = require_minari()
    check_dataset_id(dataset_id)
    summaries = _summaries([Path(p) for p in paths])
    first = summaries[0]
    root = datasets_root(out)
    target = root / dataset_id
    if target.exists():
        raise EpisodeError(
            target,
            "dataset_id",
            f"expected a new dataset id, {dataset_id!r} already exists (export never "
            f"overwrites: pass another --dataset-id, e.g. the next version, or delete {target})",
        )
    controllers = sorted({s.controller for s in summaries})
    players = sorted({s.player for s in summaries if s.player})
    description = (
        f"{len(summaries)} episode(s) of {first.env_id} recorded with DemoStudio "
        f"(controllers: {', '.join(controllers)}; players: {', '.join(players) or 'unknown'})."
    )
    if frames:
        _check_frames(summaries)
    env = _env(summaries)
    made = _made_by_export(root, target)
    total = len(summaries)
    try:
        root.mkdir(parents=True, exist_ok=True)
        with using_root(root), warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # Minari's "X is None" reminders
            dataset = None
            for i, s in enumerate(summaries):
                with EpisodeFile(s.path) as ep:
                    buffer = _buffer(minari, ep)
                    if dataset is None:
                        dataset = minari.create_dataset_from_buffers(
                            dataset_id,
                            [buffer],
                            env=env,
                            observation_space=first.observation_space,
                            action_space=first.action_space,
                            algorithm_name=", ".join(controllers),
                            author=set(players) or None,
                            description=description,
                            requirements=_requirements(first),
                            data_format="hdf5",
                            jpeg_encoding=False,
                        )
                    else:
                        dataset.update_dataset_from_buffer([buffer])
                    meta = {EPISODE_ATTR: _episode_attr(ep)}
                    dataset.storage.update_episode_metadata([meta], [i])
                    if frames:
                        _add_frames(dataset.storage.data_path, i, ep)
                if progress is not None:
                    progress(i + 1, total)
            dataset.storage.update_metadata(
                {
                    METADATA_KEY: {
                        "schema_version": SCHEMA_VERSION,
                        "frames_info_key": FRAME_KEY if frames else None,
                        "episodes": total,
                    },
                    "dataset_size": dataset.storage.get_size(),
                }
            )
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        _remove(made)
        raise
    finally:
        env.close()
    return target

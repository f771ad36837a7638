"""A local Minari dataset opened for import: checked before Minari reads an episode from it or
makes an env from it, with what every episode of it shares (spaces, env metadata from the
installed registry's env, authorship)."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from demostudio.episode import (
    EpisodeError,
    UnknownEnvError,
    env_metadata,
    make_env,
    space_from_json,
    space_to_json,
)
from demostudio.episode.attrs import GYM_ID
from demostudio.episode.envs import spec_differences

from .minari_check import check_metadata, check_minari_file
from .minari_store import METADATA_KEY, datasets_root


@dataclass(frozen=True)
class Source:
    """An opened Minari dataset and what every episode shares."""

    dataset: Any
    where: Path
    dataset_id: str
    observation_space: Any
    action_space: Any
    env_attrs: dict[str, Any]
    frames_key: str | None
    algorithm: str
    authors: tuple[str, ...]
    lossy_images: bool
    """Minari stored image observations as JPEG: they come back approximately."""


def _data_folder(dataset_id_or_path: str) -> Path | None:
    """The ``data`` folder of a local dataset: the path given, its ``data``, or the id's
    folder in the datasets root (where ``minari.load_dataset`` looks, nothing downloaded);
    None when there is none."""
    path = Path(dataset_id_or_path)
    for data in (path / "data", path, datasets_root() / dataset_id_or_path / "data"):
        if os.path.lexists(data / "metadata.json"):
            return data
    return None


def _open(minari: Any, dataset_id_or_path: str) -> tuple[Any, Path]:
    data = _data_folder(dataset_id_or_path)
    if data is None:
        raise EpisodeError(
            dataset_id_or_path,
            None,
            f"expected a local Minari dataset id or folder, found neither (no metadata.json in "
            f"it, its data folder or {datasets_root() / dataset_id_or_path / 'data'}; "
            f"`minari download ID` fetches a remote one)",
        )
    check_metadata(data)  # before Minari sizes anything by it or makes an env from it
    try:
        return minari.MinariDataset(data), data
    except FileNotFoundError as exc:
        raise EpisodeError(
            data, None, f"expected a local Minari dataset folder, cannot read it ({exc})"
        ) from None
    except (NotImplementedError, ValueError, KeyError, TypeError, AssertionError) as exc:
        raise EpisodeError(
            data,
            "metadata.json",
            f"expected a Minari dataset whose spaces can be recreated, got: "
            f"{type(exc).__name__}: {exc}",
        ) from None


def _spaces(where: Path, dataset: Any) -> tuple[Any, Any]:
    out = []
    for key in ("observation_space", "action_space"):
        space = getattr(dataset, key)
        try:
            out.append(space_from_json(space_to_json(space)))
        except (TypeError, ValueError) as exc:
            raise EpisodeError(where, key, f"cannot store this space: {exc}") from None
    return out[0], out[1]


def _env_attrs(where: Path, dataset: Any) -> dict[str, Any]:
    spec = dataset.env_spec
    if spec is None:
        raise EpisodeError(
            where,
            "env_spec",
            "expected an env spec to recreate the env (DemoStudio episodes name their env), "
            "the dataset has none",
        )
    if not GYM_ID.check(spec.id):  # gymnasium would import the module a "module:Env" id names
        raise EpisodeError(
            where, "env_spec", f"expected its id to be {GYM_ID.name}, got {spec.id!r:.200}"
        )
    for key, reason in spec_differences(spec.id, dataclasses.asdict(spec)):
        raise EpisodeError(where, f"env_spec.{key}", reason)
    kwargs = {k: v for k, v in (spec.kwargs or {}).items() if k != "render_mode"}
    try:
        env = make_env(spec.id, kwargs, max_episode_steps=spec.max_episode_steps)
    except UnknownEnvError as exc:
        raise EpisodeError(where, "env_spec", f"cannot recreate the env: {exc}") from None
    except Exception as exc:  # the env's own constructor rejected the stored kwargs
        raise EpisodeError(
            where, "env_spec", f"cannot recreate the env {spec.id!r}: {type(exc).__name__}: {exc}"
        ) from None
    try:
        return env_metadata(env)
    finally:
        env.close()


def _frames_key(dataset: Any) -> str | None:
    exported = dataset.storage.metadata.get(METADATA_KEY)
    if isinstance(exported, dict):
        return exported.get("frames_info_key")
    return None


def _has_image(space: Any) -> bool:
    from gymnasium import spaces
    from minari.dataset.minari_storage import is_image_space

    if isinstance(space, spaces.Dict):
        return any(_has_image(s) for s in space.spaces.values())
    if isinstance(space, spaces.Tuple):
        return any(_has_image(s) for s in space.spaces)
    return is_image_space(space)


def open_source(minari: Any, dataset_id_or_path: str) -> Source:
    dataset, where = _open(minari, dataset_id_or_path)
    check_minari_file(dataset)  # before Minari reads an episode or an output folder exists
    obs_space, act_space = _spaces(where, dataset)
    metadata = dataset.storage.metadata
    authors = metadata.get("author") or ()
    return Source(
        dataset=dataset,
        where=where,
        dataset_id=str(dataset.id),
        observation_space=obs_space,
        action_space=act_space,
        env_attrs=_env_attrs(where, dataset),
        frames_key=_frames_key(dataset),
        algorithm=str(metadata.get("algorithm_name") or ""),
        authors=tuple(sorted(str(a) for a in authors)),
        lossy_images=bool(dataset.storage.jpeg_encoding) and _has_image(dataset.observation_space),
    )

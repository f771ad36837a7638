"""The data layer: episode files (schema, writer, reader, recovery, validation, verification)
and the recording wrapper. Imports numpy, h5py and gymnasium only."""

from .actors import Actors, default_actor, person_mask
from .compact import CompactResult, compact_episode
from .envs import (
    EnvKwargsError,
    UnknownEnvError,
    ensure_registered,
    env_metadata,
    make_env,
    make_env_with_kwargs,
    remake_env,
)
from .library import LibraryEntry, describe_datasets, scan, validate
from .reader import (
    EpisodeData,
    EpisodeFile,
    EpisodeSummary,
    StepRecord,
    StepScalars,
    find_episodes,
    find_partials,
    load_episode,
    open_episode,
    read_summary,
    update_metadata,
)
from .recorder import RecordEpisodes, episode_filename, fresh_seed
from .recover import Recovery, recover_folder, recover_partial
from .schema import (
    FORMAT_NAME,
    SCHEMA_VERSION,
    EpisodeError,
    SchemaVersionError,
    env_folder_name,
)
from .spaces import index_nested, space_from_json, space_to_json
from .verify import (
    Divergence,
    VerifyResult,
    describe_difference,
    observation_leaves,
    verify_episode,
)
from .writer import EpisodeWriter

__all__ = [
    "FORMAT_NAME",
    "SCHEMA_VERSION",
    "Actors",
    "CompactResult",
    "Divergence",
    "EnvKwargsError",
    "EpisodeData",
    "EpisodeError",
    "EpisodeFile",
    "EpisodeSummary",
    "EpisodeWriter",
    "LibraryEntry",
    "RecordEpisodes",
    "Recovery",
    "SchemaVersionError",
    "StepRecord",
    "StepScalars",
    "UnknownEnvError",
    "VerifyResult",
    "compact_episode",
    "default_actor",
    "describe_datasets",
    "describe_difference",
    "ensure_registered",
    "env_folder_name",
    "env_metadata",
    "episode_filename",
    "find_episodes",
    "find_partials",
    "fresh_seed",
    "index_nested",
    "load_episode",
    "make_env",
    "make_env_with_kwargs",
    "observation_leaves",
    "open_episode",
    "person_mask",
    "read_summary",
    "recover_folder",
    "recover_partial",
    "remake_env",
    "scan",
    "space_from_json",
    "space_to_json",
    "update_metadata",
    "validate",
    "verify_episode",
]

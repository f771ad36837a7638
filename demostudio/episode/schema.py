"""The DemoStudio episode file: one episode per HDF5 file. This module is the schema's one home.

Layout (schema version 2)
-------------------------
An episode of ``T`` steps is stored in ``<name>.h5`` (``<name>.h5.partial`` while it is being
written). Every root attribute is a JSON document stored as HDF5 text, so nothing is ever
unpickled on read.

Root attributes (JSON):

======================  ====================================================================
``format``              ``"demostudio.episode"``
``schema_version``      integer; readers refuse versions newer than :data:`SCHEMA_VERSION`
``env_id``              Gymnasium id, e.g. ``"ALE/Breakout-v5"``
``env_kwargs``          keyword arguments given to ``gymnasium.make`` (without ``render_mode``)
``env_spec``            the object ``EnvSpec.to_json()`` writes for the env as
                        ``gymnasium.make`` made it (wrappers put around it later are not
                        listed), or null when the env has no spec. A record, never a recipe:
                        readers compare its entry points and wrappers with the installed
                        registry's (``validate`` names a differing one) and nothing is made
                        or imported from it
``seed``                the reset seed (an integer from 0 to :data:`MAX_SEED`, fresh 63-bit when
                        the caller gave none)
``reset_options``       the options given to ``reset`` (object or null)
``observation_space``   the observation space (see :mod:`demostudio.episode.spaces`)
``action_space``        the action space
``action_meanings``     list of names (ALE's ``get_action_meanings``, MiniGrid's actions) or null
``controller``          ``"keyboard"``, ``"policy:<name>"``, ...
``player``              who played (free text)
``key_map``             ``{"key+key": action}`` used by a keyboard controller, or null
``fps``                 target steps per second of the recording loop from the first step (null:
                        as fast as possible), from :data:`MIN_FPS` to :data:`MAX_FPS`; when the
                        player changed the speed, see below
``speed_changes``       only when the rate changed during the episode: ``[[step, fps], ...]``,
                        steps increasing; from ``step`` on the target rate was ``fps`` (null:
                        stepped by hand, frame advance while paused) until the next entry
``frameskip``           frameskip setting of the env (1 to :data:`MAX_FRAMESKIP`, or ALE's
                        ``[low, high]``), or null
``sticky_actions``      ``repeat_action_probability`` of the env (0 to 1), or null
``versions``            ``{"demostudio": .., "gymnasium": .., "numpy": .., "ale-py": ..}``
``recorded_at``         ISO 8601 time of the reset, with time zone
``length``              ``T`` (written on close; recovery fills it in)
``total_return``        sum of rewards
``terminated``          whether the last step terminated
``truncated``           whether the last step truncated (or the episode was cut short)
``recovered``           true when the file was rebuilt from a ``.partial`` left by a crash
``actor_names``         who can act (version 2): ``"person:<player>"`` for a person,
                        ``"policy:<name>"`` (or the controller string) for an agent or script;
                        index 0 is the controller's (a ``keyboard`` controller's is the player)
``tags``                list of strings ("good", "bad", ...)
``notes``               free text
======================  ====================================================================

Datasets (Minari's conventions: T steps, T+1 observations):

=========================  ================  ===============================================
``observations``           (T+1, ...)        a group for Dict / Tuple spaces (keys, or "0", "1"..)
``actions``                (T, ...)          a group for Dict / Tuple action spaces
``rewards``                (T,) float64      (other float dtypes are read as float64)
``terminations``           (T,) bool
``truncations``            (T,) bool
``frames``                 (T+1, H, W, 3)    uint8 RGB, one frame per chunk, deflate level 1
``timestamps``             (T+1,) float64    wall-clock seconds (Unix time) of reset and steps
``keys``                   (T,) text         JSON list of the key names held for each step
``actors``                 (T,) uint8        who took each step: an index into ``actor_names``
``infos/<key>``            (T+1, ...)        numeric leaves; nested dicts become groups
``infos/<key>`` (text)     (T+1,) text       non-numeric leaves as JSON text
``info_present/<key>``     (T+1,) bool       only where some step lacked ``<key>``
=========================  ================  ===============================================

Whole-number leaves of ``observations`` and ``actions`` (Discrete, MultiDiscrete, MultiBinary,
integer Box) are stored as the space's dtype (int64 for Discrete); a narrower integer dtype is
read (and widened) only when it holds every value of the space.

``rewards``, ``timestamps`` and the float leaves of ``observations`` and ``actions`` hold finite
numbers only (no NaN or infinity); ``frames`` have at least one pixel each way.

Index 0 of ``observations``, ``frames``, ``timestamps`` and ``infos`` belongs to the reset;
index ``t + 1`` to step ``t``. A missing numeric info value holds the dataset's fill value
(NaN for floats, 0 otherwise) and ``info_present/<key>`` says which rows are real. A key's
type is fixed by its first value: a later value that the column cannot hold without change
(2.5 in an integer column, another shape) is marked absent too.

Version 2 added ``actors`` and ``actor_names`` (who acted, so an episode with take-overs is a
demonstration for exactly the person's stretches). Version-1 files are still read: every step
was taken by the ``controller`` (see :mod:`demostudio.episode.actors`).

While writing, datasets grow in blocks; the root attribute ``flushed_steps`` (JSON int) says
how many steps were complete at the last flush. Beside the ``.partial``, ``<name>.h5.journal``
logs every step as it is written (see :mod:`demostudio.episode.journal`); recovery rebuilds
the episode from it, and falls back to ``flushed_steps`` only for a ``.partial`` without one.
"""

from __future__ import annotations

FORMAT_NAME = "demostudio.episode"
SCHEMA_VERSION = 2
SUFFIX = ".h5"
PARTIAL_SUFFIX = ".h5.partial"

MIN_FPS = 0.01
"""Slowest frame rate a file may state (one step per 100 s; GIF delays go up to 655 s)."""
MAX_FPS = 10_000.0
"""Fastest frame rate a file may state (or an export may ask for)."""
FPS_RANGE = f"from {MIN_FPS:g} to {MAX_FPS:g}"
"""The accepted frame rates, as error messages say it."""
MAX_FRAMESKIP = 1000
"""Largest frameskip a file may state (ALE's is 4; a step of 1000 frames is 17 s of play)."""
MAX_SEED = 2**64 - 1
"""Largest reset seed a file may state: older recorders drew fresh 64-bit seeds, and a Minari
export stores the seed as a 64-bit HDF5 integer (a larger one has no HDF5 type)."""
MAX_GIVEN_SEED = 2**63 - 1
"""Largest seed a user gives (a ``--seed`` flag, a run's config): gymnasium and numpy refuse
negative seeds, and an episode file, torch.manual_seed and a Minari export take at most
:data:`MAX_SEED`; the commands add offsets to the seed they are given (``seed + episode``,
``seed + 10_000 + clock``, ...), so it leaves them 2**63 of room."""
MAX_DISCRETE_N = 1 << 16
"""Most choices of a Discrete space (Atari has 18 actions, Taxi 500 states)."""


def fps_in_range(fps: object) -> bool:
    """``fps`` is a number (not a bool) a file may state as its frame rate."""
    return isinstance(fps, (int, float)) and not isinstance(fps, bool) and MIN_FPS <= fps <= MAX_FPS


# Root attributes every finished episode must have.
REQUIRED_ATTRS = (
    "format",
    "schema_version",
    "env_id",
    "env_kwargs",
    "seed",
    "observation_space",
    "action_space",
    "controller",
    "recorded_at",
    "length",
    "total_return",
    "terminated",
    "truncated",
)
# Datasets (or groups) every finished episode must have, with their length relative to T.
REQUIRED_DATASETS = {
    "observations": 1,
    "actions": 0,
    "rewards": 0,
    "terminations": 0,
    "truncations": 0,
    "timestamps": 1,
}
# Optional datasets (or groups) and their length relative to T.
OPTIONAL_DATASETS = {"frames": 1, "keys": 0, "actors": 0, "infos": 1, "info_present": 1}
# Every top-level dataset or group the schema knows, with its length relative to T.
LENGTH_OFFSETS = {**REQUIRED_DATASETS, **OPTIONAL_DATASETS}
# The top-level names that are groups; ``observations`` and ``actions`` are groups only for a
# Dict / Tuple space, and every other name above is one dataset.
GROUPS = ("infos", "info_present")


class EpisodeError(ValueError):
    """A problem with an episode file, naming the file, the field and what was expected."""

    def __init__(self, path: object, field: str | None, message: str):
        self.path = str(path)
        self.field = field
        self.reason = message
        where = f"{self.path}" + (f" [{field}]" if field else "")
        super().__init__(f"{where}: {message}")


class SchemaVersionError(EpisodeError):
    """The file was written by a newer DemoStudio than this one."""


def env_folder_name(env_id: str) -> str:
    """The folder an environment's episodes live in: ``ALE/Breakout-v5`` -> ``ALE-Breakout-v5``."""
    return env_id.replace("/", "-").replace(":", "-")

"""What reading an episode file hands out: its summary, the whole episode in memory, one step,
and the per-step scalars."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from gymnasium import spaces as gym_spaces


@dataclass(frozen=True)
class EpisodeSummary:
    """An episode's metadata, read without touching its arrays."""

    path: Path
    env_id: str
    env_kwargs: dict[str, Any]
    seed: int | None
    controller: str
    player: str
    length: int
    total_return: float
    terminated: bool
    truncated: bool
    recorded_at: str
    tags: tuple[str, ...]
    notes: str
    recovered: bool
    fps: float | None
    size_bytes: int
    observation_space: gym_spaces.Space
    action_space: gym_spaces.Space
    action_meanings: tuple[str, ...] | None
    attrs: dict[str, Any] = field(repr=False)
    """Every root attribute, JSON-decoded."""
    human_share: float = 0.0
    """Share of the steps a person took (see :mod:`demostudio.episode.actors`)."""
    takeovers: int = 0
    """How many times a person took over from an agent."""


@dataclass(frozen=True)
class EpisodeData:
    """A whole episode in memory. Arrays follow the space's nesting (dict / tuple / array)."""

    summary: EpisodeSummary
    observations: Any
    """[T+1, ...] per leaf."""
    actions: Any
    """[T, ...] per leaf."""
    rewards: np.ndarray
    """[T] float64."""
    terminations: np.ndarray
    """[T] bool."""
    truncations: np.ndarray
    """[T] bool."""
    timestamps: np.ndarray
    """[T+1] float64 wall-clock seconds."""
    infos: dict[str, np.ndarray]
    """[T+1, ...] per flattened info key ("a/b" for nested dicts)."""
    info_present: dict[str, np.ndarray]
    """[T+1] bool for the info keys that some row lacks (absent rows hold the fill value)."""
    keys: list[list[str]]
    """The key names held at each of the T steps (empty lists when not recorded)."""
    frames: np.ndarray | None
    """[T+1, H, W, 3] uint8 when loaded with ``frames=True`` and the file has them."""
    actors: np.ndarray
    """[T] uint8: who took each step, an index into ``actor_names``."""
    actor_names: list[str]
    """``person:<player>``, ``policy:<name>``, ... (version-1 files: the controller)."""

    def __len__(self) -> int:
        return int(self.rewards.shape[0])


class StepScalars(NamedTuple):
    """The per-step scalars of a whole episode, without its observations."""

    rewards: np.ndarray
    """[T] float64."""
    terminations: np.ndarray
    """[T] bool."""
    truncations: np.ndarray
    """[T] bool."""


@dataclass(frozen=True)
class StepRecord:
    """One step ``t``: the observation before it, the action, and what followed."""

    index: int
    observation: Any
    action: Any
    reward: float
    terminated: bool
    truncated: bool
    next_observation: Any
    info: dict[str, Any]
    keys: list[str]
    timestamp: float

"""The games the launcher lists, and how many recordings each has."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from demostudio.episode import env_folder_name
from demostudio.episode.schema import PARTIAL_SUFFIX, SUFFIX


class Game(NamedTuple):
    env_id: str
    title: str
    family: str


BUNDLED_GAMES: tuple[Game, ...] = (
    Game("CartPole-v1", "CartPole", "classic control"),
    Game("MountainCar-v0", "Mountain Car", "classic control"),
    Game("MountainCarContinuous-v0", "Mountain Car (continuous)", "classic control"),
    Game("Acrobot-v1", "Acrobot", "classic control"),
    Game("LunarLander-v3", "Lunar Lander", "Box2D"),
    Game("LunarLanderContinuous-v3", "Lunar Lander (continuous)", "Box2D"),
    Game("ALE/Breakout-v5", "Breakout", "Atari"),
    Game("ALE/Pong-v5", "Pong", "Atari"),
    Game("ALE/MontezumaRevenge-v5", "Montezuma's Revenge", "Atari"),
    Game("ALE/SpaceInvaders-v5", "Space Invaders", "Atari"),
    Game("MiniGrid-DoorKey-8x8-v0", "DoorKey 8x8", "MiniGrid"),
    Game("MiniGrid-KeyCorridorS3R1-v0", "KeyCorridor S3R1", "MiniGrid"),
    Game("MiniGrid-MemoryS13Random-v0", "Memory S13 Random", "MiniGrid"),
)


def recordings_folder(root: Path, env_id: str) -> Path:
    """Where ``demostudio play`` saves ``env_id``'s episodes under ``root``."""
    return Path(root) / env_folder_name(env_id)


def count_unfinished(root: Path, env_id: str) -> int:
    """``.partial`` files in the env's folder: a recording under way, or one left by a crash
    (``demostudio recover FOLDER`` turns it into an episode)."""
    folder = recordings_folder(root, env_id)
    if not folder.is_dir():
        return 0
    return sum(1 for p in folder.glob(f"*{PARTIAL_SUFFIX}") if p.is_file())


def count_recordings(root: Path, env_id: str) -> int:
    """Finished episode files (``*.h5``, not ``.partial``) in the env's folder."""
    folder = recordings_folder(root, env_id)
    if not folder.is_dir():
        return 0
    return sum(1 for p in folder.glob(f"*{SUFFIX}") if p.is_file())

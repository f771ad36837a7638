"""A trained agent watched without a window (``demostudio watch RUN --headless``): its episodes
played through evaluation's loop, so the returns and goal counts are evaluation's, and, with a
folder to record into, through the recording wrapper, so the files are a person's kind."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from agents.core.evaluate import run_episodes
from agents.core.restore import RestoredAgent
from demostudio.episode import RecordEpisodes, env_folder_name


class WatchedEpisode(NamedTuple):
    episode_return: float
    length: int
    reached_goal: bool | None
    """None where the env has no goal (see :mod:`agents.core.evaluate`)."""
    path: Path | None
    """Its episode file when recorded."""


def watch_headless(
    agent: RestoredAgent, episodes: int, seed: int | None = None, record: Path | None = None
) -> list[WatchedEpisode]:
    """Play ``episodes`` episodes of ``agent`` (reset seeds ``seed``, ``seed + 1``, ...; None:
    fresh ones); with ``record``, each is saved under ``record/<env folder>`` as it ends
    (frames rendered for the files), else nothing is written and nothing rendered."""
    env = agent.make_env(render_mode=None if record is None else "rgb_array")
    recorder = None
    if record is not None:
        folder = record / env_folder_name(agent.env_id)
        env = recorder = RecordEpisodes(env, folder, controller=agent.controller.name)
    try:
        result = run_episodes(env, agent.controller, episodes, seed=seed)
    finally:
        env.close()
    played = len(result.returns)
    paths: list[Path | None] = [None] * played
    if recorder is not None:  # one file per episode, in order (each saved as it ended)
        paths = [*recorder.saved, *paths][:played]
    goals: list[bool | None] = list(result.successes or [None] * played)
    return [
        WatchedEpisode(ret, length, goal, path)
        for ret, length, goal, path in zip(result.returns, result.lengths, goals, paths)
    ]


__all__ = ["WatchedEpisode", "watch_headless"]

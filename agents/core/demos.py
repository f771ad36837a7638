"""Recorded episodes -> replay sequences, read only through ``demostudio.episode``.

Which steps are demonstrations (``--demo-steps``): with ``person`` (the default) a file in
which a person acted gives only the person's steps, e.g. the stretches a person drove after
taking over from an agent; the episode is still cut as a whole on the usual grid, so the
agent's steps before a stretch are burn-in context (and feed the stored LSTM states) while
their ``mask`` is False: no loss learns from them, and an n-step target ends at the person's
last step, bootstrapping from the observation where control went back. A file no person
acted in is used whole; ``all`` uses every step of every file. :func:`keep_demo_steps` does
the masking for files and for the live corrections of ``demostudio coach`` alike.

Before any training the demos are checked against the training env: the env id (unless
an override names the id the demos were recorded on), the action space, and the
observation space after preprocessing. Demo observations go through the very same
preprocessing function and SequenceWriter as the actors' live observations; the stored
LSTM states are the current network's states along the demo.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import gymnasium as gym
import numpy as np
import torch

from agents.core.config import DemoConfig, RunConfig
from agents.core.config.demos import check_unchanged_choice
from agents.core.demo_report import demo_report
from agents.core.networks import RecurrentNetwork
from agents.core.policy import BatchPolicy, EpsilonGreedy
from agents.core.preprocess import Preprocessor, obs_spec
from agents.core.sequences import (
    EndBehavior,
    SequenceBatch,
    SequenceWriter,
    concat_batches,
    take,
)
from agents.core.unchanged import skip_unchanged

if TYPE_CHECKING:
    from agents.core.context import RunContext

from demostudio.episode import (
    EpisodeData,
    EpisodeError,
    EpisodeSummary,
    find_episodes,
    load_episode,
    person_mask,
    read_summary,
)

DEMO_STEPS = ("person", "all")
STEP_EXTRA = "_demo_step"
"""A private per-step extra (the step's index in its episode) that :func:`keep_demo_steps`
reads and removes: demo sequences leave the loader with the agent's extras only."""


class DemoSet(NamedTuple):
    paths: list[Path]
    episodes: list[EpisodeData]
    masks: list[np.ndarray] | None = None
    """``[T]`` bool per episode: its demonstration steps (None: every step of every one)."""
    summaries: list[EpisodeSummary] | None = None
    """The files' metadata, read while checking them (None: not kept)."""
    unchanged: int = 0
    """Demonstration steps left out of learning for changing nothing (see
    :mod:`agents.core.unchanged`)."""

    def mask(self, i: int) -> np.ndarray:
        if self.masks is None:
            return np.ones(len(self.episodes[i]), bool)
        return self.masks[i]

    @property
    def steps(self) -> int:
        """Demonstration steps (the agent's steps of take-over files not counted)."""
        return sum(int(self.mask(i).sum()) for i in range(len(self.episodes)))

    def subset(self, index: Sequence[int]) -> DemoSet:
        """The episodes at ``index`` (with their masks)."""
        masks = None if self.masks is None else [self.masks[i] for i in index]
        sums = None if self.summaries is None else [self.summaries[i] for i in index]
        return DemoSet(
            [self.paths[i] for i in index], [self.episodes[i] for i in index], masks, sums,
            self.unchanged,
        )  # fmt: skip


def demo_mask(episode: EpisodeData, demo_steps: str = "person") -> np.ndarray:
    """``[T]`` bool, the steps of ``episode`` that are demonstrations (see the module doc)."""
    if demo_steps not in DEMO_STEPS:
        raise ValueError(f"--demo-steps: expected one of {list(DEMO_STEPS)}, got {demo_steps!r}")
    everything = np.ones(len(episode), bool)
    if demo_steps == "all":
        return everything
    person = person_mask(episode.actors, episode.actor_names)
    return person if person.any() else everything


def keep_demo_steps(
    seqs: SequenceBatch,
    learn: np.ndarray,
    burn_in: int,
    learned_until: Mapping[int, int] | None = None,
) -> SequenceBatch | None:
    """``seqs`` (cut with the :data:`STEP_EXTRA` extra) with ``mask`` False wherever
    ``learn[step]`` is False (and, for a sequence starting at step ``s``, before
    ``learned_until[s]``: steps an earlier version of that sequence already gave), without
    the sequences that have nothing left to learn from (after ``burn_in``, unless they start
    the episode); None if none is left. ``learn``: ``[T]`` bool over the episode's steps so far."""
    step = seqs.extras[STEP_EXTRA].astype(np.int64)  # [B, L]
    mask = seqs.mask & learn[np.clip(step, 0, len(learn) - 1)]
    if learned_until:
        since = np.array([learned_until.get(int(s), 0) for s in step[:, 0]])
        mask &= step >= since[:, None]
    fields = {name: getattr(seqs, name) for name in SequenceBatch._fields}
    fields["mask"] = mask
    fields["extras"] = {k: v for k, v in seqs.extras.items() if k != STEP_EXTRA}
    # what the losses learn (agents.core.losses.learn_mask): the steps after the burn-in, and
    # every step of a sequence that starts its episode
    starts = seqs.prev_action[:, 0] < 0
    keep = np.flatnonzero(mask[:, burn_in:].any(axis=1) | (starts & mask.any(axis=1)))
    return take(SequenceBatch(**fields), keep) if len(keep) else None


def check_demo_env(path: Path, env_id: str, accept_env_id: str | None = None) -> EpisodeSummary:
    """The demo's summary once it was recorded on ``env_id`` (or ``accept_env_id``, the
    ``--demo-env-override``); EpisodeError naming ``path`` and its env else."""
    s = read_summary(path)
    wanted = accept_env_id or env_id
    if s.env_id != wanted:
        hint = (
            "" if accept_env_id else " (pass --demo-env-override ID to accept another env's demos)"
        )
        raise EpisodeError(path, "env_id", f"expected demos of {wanted!r}, got {s.env_id!r}{hint}")
    return s


def check_demo(
    path: Path, env_id: str, env: gym.Env, accept_env_id: str | None = None
) -> EpisodeSummary:
    """The demo's summary; EpisodeError naming ``path`` and what differs from the training
    env."""
    s = check_demo_env(path, env_id, accept_env_id)
    if s.action_space != env.action_space:
        raise EpisodeError(
            path,
            "action_space",
            f"expected {env.action_space} like the training env, got {s.action_space}",
        )
    try:
        demo_spec = obs_spec(s.observation_space)
    except TypeError as exc:
        raise EpisodeError(path, "observation_space", str(exc)) from None
    env_spec = obs_spec(env.observation_space)
    if demo_spec != env_spec:
        raise EpisodeError(
            path,
            "observation_space",
            f"expected {env_spec} after preprocessing (env: {env.observation_space}), "
            f"got {demo_spec} (demo: {s.observation_space})",
        )
    return s


def load_demos(
    paths: Sequence[str | os.PathLike],
    env_id: str,
    env: gym.Env,
    accept_env_id: str | None = None,
    demo_steps: str = "person",
    unchanged: str = DemoConfig.demo_unchanged_steps,
) -> DemoSet:
    """Find, check and load the demo episodes under ``paths`` (files or folders), each with
    the mask of its demonstration steps (``demo_steps``: see :func:`demo_mask`), less the
    steps that changed nothing unless ``unchanged`` is ``learn`` (:mod:`agents.core.unchanged`)."""
    check_unchanged_choice(unchanged)
    files = find_episodes(list(paths))
    if not files:
        raise FileNotFoundError(
            f"expected episode files (*.h5) under {', '.join(map(str, paths))}, got none"
        )
    summaries = [check_demo(p, env_id, env, accept_env_id) for p in files]
    episodes = [load_episode(p) for p in files]
    masks = [demo_mask(e, demo_steps) for e in episodes]
    if unchanged == "learn":
        return DemoSet(files, episodes, masks, summaries)
    masks, skipped = skip_unchanged(episodes, masks, loops=unchanged == "skip-loops")
    return DemoSet(files, episodes, masks, summaries, skipped)


@torch.no_grad()
def episode_sequences(
    episode: EpisodeData,
    preprocess: Preprocessor,
    network: RecurrentNetwork,
    length: int,
    period: int,
    end: EndBehavior,
    device: torch.device,
    extras: Callable[[np.ndarray], dict[str, np.ndarray]] | None = None,
    learn: np.ndarray | None = None,
    burn_in: int = 0,
) -> SequenceBatch | None:
    """Cut one recorded episode into sequences (stored states from ``network``, read only;
    per-step extras from ``extras(actions)``, see ``Agent.demo_extras``). With ``learn``
    (``[T]`` bool, see :func:`demo_mask`) only those steps are learned from: the others are
    masked out and sequences with nothing to learn after ``burn_in`` are dropped."""
    processed = preprocess(episode.observations)  # the actors' function, on all T+1 steps
    head = next(iter(network.spec.heads))  # the selector is unused: only states are read
    policy = BatchPolicy(
        network, EpsilonGreedy(np.zeros(1), head), 1, device, np.random.default_rng(0)
    )
    writer = SequenceWriter(length, period, end)
    h, c = policy.numpy_state()
    writer.begin({k: v[0] for k, v in processed.items()}, h[0], c[0])
    actions = np.asarray(episode.actions).astype(np.int64).reshape(len(episode))
    per_step = extras(actions) if extras is not None else {}
    partial = learn is not None and not learn.all()
    if partial:
        per_step = {**per_step, STEP_EXTRA: np.arange(len(episode), dtype=np.int64)}
    parts = []
    for t in range(len(episode)):
        policy.step_network({k: v[t : t + 1] for k, v in processed.items()})
        policy.observe(actions[t : t + 1], episode.rewards[t : t + 1])
        h, c = policy.numpy_state()
        seq = writer.step(
            actions[t],
            float(episode.rewards[t]),
            bool(episode.terminations[t]),
            {k: v[t + 1] for k, v in processed.items()},
            h[0],
            c[0],
            {k: v[t] for k, v in per_step.items()},
        )
        if seq is not None:
            parts.append(seq)
    last = writer.end()
    if last is not None:
        parts.append(last)
    if not parts:
        return None
    seqs = concat_batches(parts)
    return keep_demo_steps(seqs, learn, burn_in) if partial else seqs


def demo_sequences(
    demos: DemoSet,
    preprocess: Preprocessor,
    network: RecurrentNetwork,
    length: int,
    period: int,
    end: EndBehavior,
    device: torch.device,
    extras: Callable[[np.ndarray], dict[str, np.ndarray]] | None = None,
    burn_in: int = 0,
) -> SequenceBatch:
    """Every episode of ``demos`` cut by :func:`episode_sequences` (their demo steps only)."""
    parts = []
    for i, e in enumerate(demos.episodes):
        s = episode_sequences(
            e, preprocess, network, length, period, end, device, extras, demos.mask(i), burn_in
        )
        if s is not None:
            parts.append(s)
    if not parts:
        raise ValueError(
            f"expected demo episodes with at least one step to learn from (after a burn-in of "
            f"{burn_in}), got none in {len(demos.paths)} episodes"
        )
    return concat_batches(parts)


class DemoFiles(NamedTuple):
    """Which demos a run loads and how they are checked against its env (DemoConfig)."""

    paths: tuple[Path, ...]
    env_id: str | None
    """The run's env (settled: ``--env`` or the demos' own)."""
    accept_env_id: str | None
    """``--demo-env-override``: the env id the demos may have been recorded on instead."""
    steps: str
    """``--demo-steps``: ``person`` or ``all``."""
    unchanged: str = DemoConfig.demo_unchanged_steps
    """``--demo-unchanged-steps``: ``skip``, ``skip-loops`` or ``learn``."""

    @classmethod
    def of(cls, cfg: DemoConfig) -> DemoFiles:
        env = cfg.env if isinstance(cfg, RunConfig) else None
        which = (cfg.demo_env_override, cfg.demo_steps, cfg.demo_unchanged_steps)
        return cls(tuple(cfg.demos or ()), env, *which)


def context_demos(files: DemoFiles, ctx: RunContext, env: gym.Env | None = None) -> DemoSet:
    """The demos of ``files`` checked against the run's env, or ``env`` where the run's
    adds leaves the recordings lack (counts into ``ctx.extras``)."""
    env = ctx.env if env is None else env
    demos = load_demos(
        files.paths, files.env_id, env, files.accept_env_id, files.steps, files.unchanged
    )
    ctx.extras["demo_episodes"] = len(demos.paths)
    ctx.extras["demo_steps"] = demos.steps
    ctx.extras["demo_report"] = demo_report(demos, files.paths)  # printed once the run starts
    return demos


__all__ = [
    "DEMO_STEPS",
    "STEP_EXTRA",
    "DemoFiles",
    "DemoSet",
    "check_demo",
    "check_demo_env",
    "context_demos",
    "demo_mask",
    "demo_sequences",
    "episode_sequences",
    "keep_demo_steps",
    "load_demos",
]

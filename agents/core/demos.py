"""Recorded episodes -> replay sequences, read only through ``demostudio.episode``.

Before any training the demos are checked against the training env: the env id (unless
an override names the id the demos were recorded on), the action space, and the
observation space after preprocessing. Demo observations go through the very same
preprocessing function and SequenceWriter as the actors' live observations; the stored
LSTM states are the current network's states along the demo.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import gymnasium as gym
import numpy as np
import torch

from agents.core.mixing import DataSource
from agents.core.networks import RecurrentNetwork
from agents.core.policy import BatchPolicy, EpsilonGreedy
from agents.core.preprocess import Preprocessor, obs_spec
from agents.core.replay import PrioritizedSequenceReplay
from agents.core.sequences import EndBehavior, SequenceBatch, SequenceWriter, concat_batches

if TYPE_CHECKING:
    from agents.core.run import RunContext

from demostudio.episode import EpisodeData, EpisodeError, find_episodes, load_episode, read_summary


class DemoSet(NamedTuple):
    paths: list[Path]
    episodes: list[EpisodeData]

    @property
    def steps(self) -> int:
        return sum(len(e) for e in self.episodes)


def check_demo(path: Path, env_id: str, env: gym.Env, accept_env_id: str | None = None) -> None:
    """Raise EpisodeError naming ``path`` and what differs from the training env."""
    s = read_summary(path)
    wanted = accept_env_id or env_id
    if s.env_id != wanted:
        hint = (
            "" if accept_env_id else " (pass --demo-env-override ID to accept another env's demos)"
        )
        raise EpisodeError(path, "env_id", f"expected demos of {wanted!r}, got {s.env_id!r}{hint}")
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


def load_demos(
    paths: Sequence[str | os.PathLike], env_id: str, env: gym.Env, accept_env_id: str | None = None
) -> DemoSet:
    """Find, check and load the demo episodes under ``paths`` (files or folders)."""
    files = find_episodes(list(paths))
    if not files:
        raise FileNotFoundError(
            f"expected episode files (*.h5) under {', '.join(map(str, paths))}, got none"
        )
    for p in files:
        check_demo(p, env_id, env, accept_env_id)
    return DemoSet(files, [load_episode(p) for p in files])


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
) -> SequenceBatch | None:
    """Cut one recorded episode into sequences (stored states from ``network``, read only;
    per-step extras from ``extras(actions)``, see ``Agent.demo_extras``)."""
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
    return concat_batches(parts) if parts else None


def demo_sequences(
    demos: DemoSet,
    preprocess: Preprocessor,
    network: RecurrentNetwork,
    length: int,
    period: int,
    end: EndBehavior,
    device: torch.device,
    extras: Callable[[np.ndarray], dict[str, np.ndarray]] | None = None,
) -> SequenceBatch:
    parts = [
        s
        for e in demos.episodes
        if (s := episode_sequences(e, preprocess, network, length, period, end, device, extras))
        is not None
    ]
    if not parts:
        raise ValueError(
            f"expected demo episodes with at least one step, got {len(demos.paths)} empty ones"
        )
    return concat_batches(parts)


def context_demos(cfg: Any, ctx: RunContext) -> DemoSet:
    """The demos of ``cfg.demos`` checked against the run's env (counts into ``ctx.extras``)."""
    demos = load_demos(cfg.demos, cfg.env, ctx.env, cfg.demo_env_override)
    ctx.extras["demo_episodes"] = len(demos.paths)
    ctx.extras["demo_steps"] = demos.steps
    return demos


def build_demo_replay(cfg: Any, ctx: RunContext) -> PrioritizedSequenceReplay:
    """The demo replay: the demos named by ``cfg.demos`` (checked against the training env,
    see :func:`load_demos`), cut into sequences exactly as the actors cut agent experience, in
    a prioritized buffer of their own that holds all of them. ``cfg`` has the DemoConfig,
    SequenceConfig and ReplayConfig groups (R2D3, DQfD, SQIL)."""
    demos = context_demos(cfg, ctx)
    seqs = demo_sequences(
        demos,
        ctx.preprocess,
        ctx.network,
        cfg.sequence_length,
        cfg.period,
        EndBehavior(cfg.end_behavior),
        ctx.device,
        ctx.agent.demo_extras,
    )
    if len(seqs) > cfg.demo_capacity:
        raise ValueError(
            f"--demo-capacity: expected room for all {len(seqs)} demo sequences "
            f"(demos are never evicted), got {cfg.demo_capacity}"
        )
    buffer = PrioritizedSequenceReplay(
        cfg.demo_capacity,
        cfg.priority_alpha,
        cfg.priority_beta,
        cfg.priority_eta,
        cfg.seed + 11,
        "demo replay",
        persistent=False,  # rebuilt from the demo files on --resume
        kind=cfg.demo_replay_kind,
    )
    buffer.add(seqs)
    return buffer


def demo_source(
    cfg: Any, ctx: RunContext, ratio: Callable[[float], float], name: str = "demo replay"
) -> DataSource:
    """:func:`build_demo_replay` as a named data source flagged ``demo``."""
    return DataSource(name, build_demo_replay(cfg, ctx), ratio, demo=True)


__all__ = [
    "DemoSet",
    "build_demo_replay",
    "check_demo",
    "context_demos",
    "demo_sequences",
    "demo_source",
    "episode_sequences",
    "load_demos",
]

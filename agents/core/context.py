"""The run state every schedule and agent hook sees (:class:`RunContext`): the parts of a
run (learner, replays and their mix, actor pool, gate, logger) and its counters as typed
fields. It sits low in the core: it imports no agent, schedule or run module (the agent is
seen through :class:`RunAgent`, what the run state asks of it), so the modules that hand
the run state to hooks import it without a cycle."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import gymnasium as gym
import numpy as np
import torch

from agents.core.actor import ActorPool, ActorSpec, AtariVector, make_vector_actor
from agents.core.config import ActorProcsConfig
from agents.core.gate import DeployGate
from agents.core.learner import Learner
from agents.core.logger import RunLogger
from agents.core.mixing import ReplayMix
from agents.core.policy import Selector, selector_part
from agents.core.preprocess import Preprocessor
from agents.core.replay import PrioritizedSequenceReplay
from agents.core.sequences import EndBehavior


class EnvInfo(NamedTuple):
    """The training env as the agent sees it (a probe env: spaces only)."""

    env_id: str
    env: gym.Env
    preprocess: Preprocessor

    @property
    def num_actions(self) -> int:
        return int(self.env.action_space.n)


class RunAgent(Protocol):
    """What the run state asks of the agent (:class:`agents.core.agent.Agent` answers it)."""

    name: str
    acting_network: str
    make_env: Callable[[], gym.Env]

    def acting_selector(self, n: int) -> Selector: ...

    def keep_episodes(self) -> bool: ...


@dataclass
class Counters:
    """A run's counters. A checkpoint stores them as a plain ``{name: int}`` dict (see
    :meth:`to_dict`); ``gate_steps`` is in it once the deployment gate has played."""

    env_steps: int = 0
    updates: int = 0
    episodes: int = 0
    phase: int = 0
    gate_steps: int = 0
    """Env steps the deployment gate's test episodes took (counted in ``env_steps`` too)."""

    def to_dict(self) -> dict[str, int]:
        out = {"env_steps": self.env_steps, "updates": self.updates,
               "episodes": self.episodes, "phase": self.phase}  # fmt: skip
        if self.gate_steps:
            out["gate_steps"] = self.gate_steps
        return out

    def load(self, saved: Mapping[str, int]) -> None:
        """Take a checkpoint's counters (checked integers; a name this run does not count is
        left out)."""
        for f in fields(self):
            if f.name in saved:
                setattr(self, f.name, int(saved[f.name]))


SEED_STRIDE = 1_000_003
"""Env seeds of run seed s start at s * SEED_STRIDE: the envs of nearby run seeds draw
disjoint streams (with ``seed + i``, seeds 0 and 1 shared 7 of 8 envs' layouts)."""


def env_seed(seed: int, episodes: int, first_env: int) -> int:
    """The first reset seed of env ``first_env`` (env i of an actor gets this + i); a resumed
    run (``episodes`` done) moves on to seeds it has not used."""
    return (seed * SEED_STRIDE + 1000 * episodes + first_env) % 2**31


class PoolSettings(NamedTuple):
    """What the actor pool is made from, read off the config once when the run is built: the
    pool itself starts on first use and sees these values, not the config."""

    num_actors: int
    """Envs per actor (this process, or each actor process)."""
    sequence_length: int
    period: int
    end_behavior: EndBehavior
    seed: int
    """The run's seed (env and policy seeds derive from it)."""
    torch_threads: int
    """Each actor process's torch thread count."""
    progress: bool
    """Show the actor processes' startup on a progress line."""
    procs: ActorProcsConfig | None = None
    """The actor processes' settings (None: an algorithm without them; actors in process)."""

    @property
    def actor_procs(self) -> int:
        return self.procs.actor_procs if self.procs is not None else 0

    @property
    def atari_vector(self) -> AtariVector:
        return self.procs.atari_vector if self.procs is not None else "python"


@dataclass
class RunContext:
    """Everything a schedule or an agent hook may use during a run. It holds no config: the
    parts hold their own settings, the pool its :class:`PoolSettings`, the checkpoint the
    config's saved form (``config``)."""

    config: dict[str, Any]
    """The config's saved form (``config_to_dict``), what a checkpoint stores."""
    agent: RunAgent
    env: gym.Env
    """A probe env (spaces only)."""
    info: EnvInfo
    learner: Learner
    device: torch.device
    run_dir: Path
    replay: PrioritizedSequenceReplay | None
    """The agent replay (None for agents without one: offline, on-policy)."""
    mix: ReplayMix | None = None
    """The named data sources batches are drawn from."""
    logger: RunLogger | None = None
    counters: Counters = field(default_factory=Counters)
    rng: np.random.Generator = field(default_factory=np.random.default_rng)
    recent_returns: list[float] = field(default_factory=list)
    stats: dict[str, list[float]] = field(default_factory=dict)
    extras: dict[str, object] = field(default_factory=dict)
    """Facts for the log (demo episodes, ...)."""
    evals: list[tuple[int, float]] = field(default_factory=list)
    gate: DeployGate | None = None
    """The deployment gate (--gate-episodes; None: off, evaluation plays the latest)."""
    pool_settings: PoolSettings | None = None
    """What the actor pool is made from (None: a run that steps no env, such as BC's)."""
    _pool: ActorPool | None = None

    @property
    def preprocess(self):
        return self.info.preprocess

    @property
    def network(self) -> torch.nn.Module:
        return self.learner.network

    def acting_weights(self) -> dict[str, torch.Tensor]:
        return self.learner.networks[self.agent.acting_network].state_dict()

    def pool(self) -> ActorPool:
        """The actor pool, started on first use (so offline phases touch no env): a
        VectorActor here, or Ray actor processes with ``--actor-procs``."""
        if self._pool is None:
            settings = self.pool_settings
            assert settings is not None, "pool() needs the run's PoolSettings"
            if settings.actor_procs:
                from agents.core.ray_pool import RayActorPool

                self._pool = RayActorPool(
                    self.actor_specs(settings.actor_procs),
                    settings.procs,
                    settings.torch_threads,
                    settings.progress,
                )
            else:
                self._pool = make_vector_actor(self.actor_specs(0)[0], self.device)
        return self._pool

    def actor_specs(self, procs: int) -> list[ActorSpec]:
        """One spec per actor process (``procs`` 0: the in-process actor), each with
        ``num_actors`` envs and its part of the acting selector (the Ape-X ladder spans all)."""
        settings = self.pool_settings
        assert settings is not None, "actor_specs() needs the run's PoolSettings"
        n = settings.num_actors
        total = n * max(procs, 1)
        selector = self.agent.acting_selector(total)
        specs = []
        for k in range(max(procs, 1)):
            part = selector if procs == 0 else selector_part(selector, k * n, (k + 1) * n)
            specs.append(
                ActorSpec(
                    self.agent.make_env,
                    self.learner.networks[self.agent.acting_network],
                    part if part is not None else self.agent.acting_selector(n),
                    n,
                    self.preprocess,
                    settings.sequence_length,
                    settings.period,
                    settings.end_behavior,
                    env_seed=env_seed(settings.seed, self.counters.episodes, k * n),
                    policy_seed=settings.seed + 2 + 7919 * k,
                    keep_episodes=self.agent.keep_episodes(),
                    first_actor=k * n,
                    atari_vector=settings.atari_vector,
                )
            )
        return specs

    def sync_weights(self) -> None:
        """Hand the pool the learner's acting weights (version: learner updates)."""
        if self._pool is not None:
            self._pool.update_weights(self.acting_weights(), self.learner.updates)

    def record(self, metrics: dict[str, float]) -> None:
        for k, v in metrics.items():
            self.stats.setdefault(k, []).append(v)

    def learn(self, batch_size: int) -> None:
        """One learner update on a batch from the data sources; priorities written back."""
        assert self.mix is not None, "learn() needs data sources"
        sample = self.mix.sample(batch_size, self.counters.env_steps)
        metrics, td, mask = self.learner.update(sample)
        if td is not None:
            self.mix.update_priorities(sample, td, mask)
        metrics["demo_share"] = float(np.mean(sample.is_demo))
        metrics["is_weight_mean"] = float(np.mean(sample.weight))  # the step size it leaves
        if self.mix.beta is not None:
            metrics["priority_beta"] = float(self.mix.beta(self.counters.env_steps))
        self.record(metrics)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()


__all__ = ["Counters", "EnvInfo", "PoolSettings", "RunAgent", "RunContext", "env_seed"]

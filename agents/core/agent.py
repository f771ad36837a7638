"""The agent interface: what an algorithm is, besides its config (Acme's split of builder /
networks / actor / learning / config, with our phases and schedules).

:class:`Agent` is an interface: the methods marked abstract have no default (every
algorithm answers them itself); the others have a neutral default (nothing extra: no target
network, no extra data source, no per-step extras, hooks that do nothing). An algorithm
subclasses :class:`Agent`, or the algorithm it extends (R2D3, DQfD and SQIL extend
:class:`agents.r2d2.R2D2`).

What the run shell asks of an agent, in order (``ctx`` is the run's
:class:`agents.core.context.RunContext`)::

    building (once per run, fresh or resumed)
      configure(env)              -> None    settle config fields whose default depends on
                                             the env (and the agent's own env-dependent
                                             state); config.json records the settled values
      build_networks(env)         -> {name: module}   called more than once (first on torch's
                                             meta device, to count and check sizes): pure,
                                             it sets nothing on the agent
      memory_sizes(count_demos)   -> Sizes   what sizes the run's memory (its buffers,
                                             widths, batch), for the check before building
        network_specs(env) / heads()                  what the default build reads
      loss(), target_rules(), param_groups(networks)  -> the learner
      sources(ctx)                -> [DataSource]  extra named sources besides the agent
                                             replay; demos are cut with demo_extras(actions)
      load_state_dict(state)                  a resumed run: what state_dict() gave
    running
      phases()                    -> [Phase]  in order, each iterated by its schedule
      start(ctx)
      per phase: on_phase_start(ctx, phase)
        per iteration of the schedule:
          on_episode(ctx, episode)            each finished agent episode
          on_rollout(ctx, batch) -> batch     on-policy: the rollout before its epochs
          metrics(ctx) -> {name: value}       at each log row
          after_iteration(ctx) -> bool        True stops the run
          eval_metrics(ctx) -> {name: value}  at each evaluation
          state_dict() -> {...}               at each checkpoint
        on_phase_end(ctx, phase)
      finish(ctx)                             before the final evaluation and checkpoint

Acting: ``acting_selector(n)`` turns the acting network's heads into actions and per-step
extras for ``n`` envs (the extras travel with the sequences into ``batch.extras``, so a new
algorithm needs no new writer); ``eval_selector(epsilon)`` is the evaluation and ``watch``
policy. Q-learners act with :class:`agents.core.policy.EpsilonGreedy`; actor-critics with
:class:`agents.core.policy.SoftmaxSample` (the policy mixed with a uniform action), storing
what their learner needs of the behaviour.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import gymnasium as gym
import numpy as np
import torch

from agents.core.batch import Loss
from agents.core.config import (
    DemoConfig,
    DemoReplayConfig,
    NetworkConfig,
    NetworkWidths,
    OptimConfig,
    ReplayConfig,
)
from agents.core.context import EnvInfo, RunContext
from agents.core.footprint import Sizes, Store, demo_store
from agents.core.layout import with_layout
from agents.core.mirror import env_reflection
from agents.core.networks import HeadSpec, NetworkSpec, RecurrentNetwork
from agents.core.obs_norm import random_steps_spec
from agents.core.policy import EpsilonGreedy, Selector
from agents.core.preprocess import ObsSpec
from agents.core.schedules import ReplayRatio, Schedule
from agents.core.sequences import SequenceBatch
from agents.core.targets import TargetRule
from demostudio.episode import make_env_with_kwargs

if TYPE_CHECKING:
    from agents.core.actor import FinishedEpisode
    from agents.core.mixing import DataSource


@dataclass
class Phase:
    """One stage of a run: its schedule and how the run shell reports it."""

    name: str
    schedule: Schedule
    log_kind: str = "train"
    """``kind`` of its metrics.jsonl rows."""
    log_every: int = 1_000
    """Log a row every this many steps of the schedule's clock."""
    eval_every: int = 0
    """Evaluate every this many clock steps (0: never during the phase)."""
    checkpoint_every: int = 0
    """Save a periodic checkpoint every this many clock steps (0: never)."""
    end_checkpoint: str | None = None
    """File name in checkpoints/ written when the phase ends (DQfD: pretrained.pt)."""
    eval_at_end: bool = False
    """Evaluate when the phase ends (before the next phase)."""


class ReplayRatioSettings(Protocol):
    """The config fields of a replay-ratio phase (ReplayConfig, OptimConfig, InteractConfig
    and RunConfig groups)."""

    env_steps_per_update: float
    batch_size: int
    min_replay: int
    total_env_steps: int
    eval_every: int
    checkpoint_every: int


def replay_ratio_phase(cfg: ReplayRatioSettings) -> Phase:
    """The one ``train`` phase of an off-policy agent: actors fill the agent replay and the
    learner updates once every ``env_steps_per_update`` env steps (R2D2's family, Reactor)."""
    schedule = ReplayRatio(
        cfg.env_steps_per_update, cfg.batch_size, cfg.min_replay, cfg.total_env_steps
    )
    return Phase(
        "train", schedule, eval_every=cfg.eval_every, checkpoint_every=cfg.checkpoint_every
    )


class Agent(ABC):
    """An algorithm, as the run shell drives it (see the module docstring for the order of
    the calls). Subclasses set ``name`` and ``config_cls`` and answer the abstract methods."""

    name: ClassVar[str]
    """The registry's name (``demostudio train NAME``), saved in checkpoints."""
    config_cls: ClassVar[type]
    """The config dataclass; the CLI flags are generated from it."""
    acting_network: ClassVar[str] = "main"
    """The network the acting policy runs (its weights go to the actors)."""
    uses_replay: ClassVar[bool] = False
    """The run keeps an agent replay filled by the actors (the main data source)."""
    final_eval_always: ClassVar[bool] = False
    """Evaluate at the end even when eval_every is 0 (BC)."""
    resume_by_default: ClassVar[bool] = False
    """``resume`` defaults to on (RND-PPO, as the Chainer RND-PPO it follows): a run folder
    without checkpoints
    then starts fresh instead of being an error; ``--no-resume`` still refuses a folder
    that has checkpoints."""

    def __init__(self, cfg: Any):
        self.cfg = cfg
        self._network_obs_spec: ObsSpec | None = None

    def configure(self, env: EnvInfo) -> None:  # noqa: B027 (a hook; its default does nothing)
        """Settle the config fields whose default depends on the env (a default per
        observation space) before the networks and the loss are built; config.json records
        the settled values. Called once per run. Default: nothing depends on the env."""

    # --- networks -------------------------------------------------------------------------
    @abstractmethod
    def heads(self) -> dict[str, HeadSpec]:
        """Heads of the ``main`` network by name."""

    def network_specs(self, env: EnvInfo) -> dict[str, NetworkSpec]:
        """The networks by name; default: ``main``, the config's torso with :meth:`heads`."""
        return {"main": self.main_spec(env, self.network_obs_spec(env, env.preprocess.spec))}

    def main_spec(self, env: EnvInfo, obs_spec: ObsSpec) -> NetworkSpec:
        """The ``main`` network's spec on ``obs_spec``: the config's torso, :meth:`heads`."""
        cfg = self.cfg
        mirror = env_reflection(env.env_id) if cfg.mirror == "env" else None
        grid = cfg.grid_encoder if isinstance(cfg, NetworkConfig) else "conv"  # RND-PPO: no choice
        return NetworkSpec(obs_spec, env.num_actions, cfg.hidden, cfg.lstm, cfg.recurrent,
                           self.heads(), grid, mirror)  # fmt: skip

    def network_obs_spec(self, env: EnvInfo, spec: ObsSpec) -> ObsSpec:
        """The observation spec the network reads: ``spec``, or with
        --policy-obs-norm-steps its vector leaves standardised by that many random steps
        (:mod:`agents.core.obs_norm`; taken once per agent and kept)."""
        steps = self.cfg.policy_obs_norm_steps
        if not steps:
            return spec
        if self._network_obs_spec is None:
            self._network_obs_spec = random_steps_spec(
                spec, self.make_env, env.preprocess, env.num_actions, steps, self.cfg.seed
            )
        return self._network_obs_spec

    def build_networks(self, env: EnvInfo) -> dict[str, torch.nn.Module]:
        """The learner's networks: by default one RecurrentNetwork per spec. Override to add
        other modules (RND's predictor and frozen target: parameters with
        ``requires_grad=False`` are kept and checkpointed but not trained). The acting
        network must be a RecurrentNetwork (its spec is what restore rebuilds). Called more
        than once, the first time on torch's meta device: build, set nothing."""
        return {k: RecurrentNetwork(s) for k, s in self.network_specs(env).items()}

    def target_rules(self) -> dict[str, TargetRule]:
        """Which networks get a target copy and how it follows (HardCopy / Polyak); default
        none."""
        return {}

    def param_groups(self, networks: Mapping[str, torch.nn.Module]) -> list[dict] | None:
        """Adam parameter groups over the trainable parameters of ``networks`` (a learning
        rate per part: RND-PPO's policy, values, predictor); None: one group at
        ``cfg.learning_rate``."""
        return None

    @abstractmethod
    def loss(self) -> Loss:
        """``loss(learner, batch) -> LossOutput`` (|TD| for priorities optional)."""

    def memory_sizes(self, count_demos: bool) -> Sizes:
        """What sizes the run's memory (:mod:`agents.core.footprint`), from the core's
        groups: the agent replay, the demo replay (``count_demos``: the demos it will hold,
        else --demo-capacity), the widths and a learner batch. An algorithm with buffers,
        heads or networks of its own adds them."""
        cfg = self.cfg
        hidden, lstm = (cfg.hidden, cfg.lstm) if isinstance(cfg, NetworkWidths) else (0, 0)
        stores = []
        if self.uses_replay and isinstance(cfg, ReplayConfig):
            capacity = int(cfg.replay_capacity)
            stores.append(Store("the agent replay", f"--replay-capacity {capacity}", capacity))
        demo_replay = isinstance(cfg, DemoReplayConfig) and isinstance(cfg, DemoConfig)
        if demo_replay and cfg.demo_capacity and cfg.demos:
            demos, capacity = tuple(cfg.demos), int(cfg.demo_capacity)
            stores.append(demo_store(demos, int(cfg.period), capacity, count_demos))
        batch = int(cfg.batch_size) if isinstance(cfg, OptimConfig) else 0
        widths = (("hidden", hidden), ("lstm", lstm)) if isinstance(cfg, NetworkWidths) else ()
        return Sizes(int(cfg.sequence_length), int(hidden), int(lstm), widths, tuple(stores),
                     batch, f"--batch-size {batch}")  # fmt: skip

    # --- environment ----------------------------------------------------------------------
    def make_env(self, render_mode: str | None = None) -> gym.Env:
        """One env of the run (actors, evaluation, watch): :meth:`build_env`, and with
        ``--fixed-layout`` every episode from one layout (:mod:`agents.core.layout`)."""
        return with_layout(self.build_env(render_mode), self.cfg.fixed_layout, self.cfg.seed)

    def build_env(self, render_mode: str | None = None) -> gym.Env:
        """``--env`` with ``--env-kwargs``. Override to add wrappers (RND-PPO's Atari frame
        stacks and sticky actions); :meth:`make_env` adds the run-wide ones."""
        extra = {} if render_mode is None else {"render_mode": render_mode}
        return make_env_with_kwargs(self.cfg.env, self.cfg.make_kwargs(), **extra)

    # --- acting ---------------------------------------------------------------------------
    @abstractmethod
    def acting_selector(self, n: int) -> Selector:
        """The training policy over ``n`` envs: ``(action, extras)`` from the heads."""

    def eval_selector(self, epsilon: float) -> Selector:
        """The evaluation and ``watch`` policy (one env); default: greedy on the first head,
        a uniform action with probability ``epsilon``."""
        return EpsilonGreedy(np.array([epsilon]), head=next(iter(self.heads())))

    def demo_extras(self, actions: np.ndarray) -> dict[str, np.ndarray]:
        """Per-step extras of a recorded demo episode (``actions``: ``[T]``; each extra
        ``[T, ...]``, the same keys as the acting policy's), so that demo and agent
        sequences mix in one batch. Reactor: ``mu`` = 1 (the recorded action was certain)."""
        return {}

    def keep_episodes(self) -> bool:
        """Whether actors hand over each finished episode's sequences (episode memory)."""
        return False

    # --- data and schedule ----------------------------------------------------------------
    def sources(self, ctx: RunContext) -> list[DataSource]:
        """Extra named sources mixed into batches besides the agent replay, each complete
        (its buffer, ratio and demo flag); the run shell mixes them."""
        return []

    @abstractmethod
    def phases(self) -> list[Phase]:
        """The run's phases in order, each with its schedule (ReplayRatio, OnPolicy,
        Offline)."""

    # --- hooks ----------------------------------------------------------------------------
    def start(self, ctx: RunContext) -> None:  # noqa: B027 (a hook; its default does nothing)
        """Called once the learner, replay and sources exist (fresh or resumed run)."""

    def on_phase_start(self, ctx: RunContext, phase: Phase) -> None:  # noqa: B027 (a hook; its default does nothing)
        """Called before the first iteration of ``phase``."""

    def on_phase_end(self, ctx: RunContext, phase: Phase) -> None:  # noqa: B027 (a hook; its default does nothing)
        """Called after the last iteration of ``phase`` (or when the run stops in it)."""

    def on_episode(self, ctx: RunContext, episode: FinishedEpisode) -> None:  # noqa: B027 (a hook; its default does nothing)
        """Called for every finished agent episode."""

    def on_rollout(self, ctx: RunContext, batch: SequenceBatch) -> SequenceBatch:
        """On-policy: the rollout's segments before the epochs, returned with what the loss
        needs added (advantages, returns)."""
        return batch

    def after_iteration(self, ctx: RunContext) -> bool:
        """Called after every schedule iteration (after logging); True stops the run."""
        return False

    def finish(self, ctx: RunContext) -> None:  # noqa: B027 (a hook; its default does nothing)
        """Called when the phases are over, before the final evaluation."""

    def metrics(self, ctx: RunContext) -> dict[str, float]:
        """Extra scalars for each training log row."""
        return {}

    def eval_metrics(self, ctx: RunContext) -> dict[str, float]:
        """Extra scalars for each evaluation row."""
        return {}

    def state_dict(self) -> dict[str, Any]:
        """What the agent needs back on --resume (numbers, lists, tensors)."""
        return {}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:  # noqa: B027 (a hook; its default does nothing)
        """Restore what :meth:`state_dict` gave."""


__all__ = ["Agent", "EnvInfo", "Phase", "ReplayRatioSettings", "replay_ratio_phase"]

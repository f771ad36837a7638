"""The agent interface: what an algorithm is, besides its config (after Acme's split of
builder / networks / actor / learning / config).

An algorithm subclasses :class:`Agent` and overrides only what differs from the defaults
(which are R2D2's: one ``main`` network with a dueling ``q`` head, a hard-copied target,
epsilon-greedy actors, the agent replay only, one replay-ratio phase):

==================== ========================================================================
``network_specs``    the networks by name, torso + named heads (``main`` is the one the
                     policy acts with unless ``acting_network`` says otherwise);
                     ``build_networks`` may add other modules (RND)
``demo_extras``      per-step extras of recorded demo steps (Reactor: mu = 1)
``target_rules``     which networks get a target copy and how it follows (HardCopy / Polyak)
``loss``             ``loss(learner, batch) -> LossOutput`` (priorities optional)
``acting_selector``  training policy over ``n`` envs: ``(action, extras)`` from the heads
``eval_selector``    evaluation / ``watch`` policy (one env)
``sources``          extra named data sources mixed into batches (demo flag explicit)
``phases``           ordered phases, each with a schedule: ReplayRatio, OnPolicy, Offline
hooks                ``start``, ``on_episode``, ``on_rollout``, ``after_iteration`` (may stop
                     the run), ``finish``, ``metrics``, ``eval_metrics``, ``state_dict`` /
                     ``load_state_dict`` (saved in checkpoints: counters, statistics, tensors)
==================== ========================================================================

How the next families plug in (no change to the core):

* **Reactor**: heads ``logits`` + ``distributional_q`` (C51 atoms) on ``main``;
  ``target_rules = {"main": Polyak(tau)}`` (the average policy network of the trust region);
  ``acting_selector`` = ``SoftmaxSample("logits")`` whose extras ``mu``/``log_prob`` land in
  ``batch.extras``; phases ``[Phase("train", ReplayRatio(...))]``; its loss does Retrace
  over the sequences and returns |TD| for priorities (or None).
* **RND-PPO**: ``network_specs = {"main": logits + value_ext + value_int heads,
  "rnd_predictor": ..., "rnd_target": ... (frozen: requires_grad False)}``; no target rules;
  ``acting_selector`` = ``SoftmaxSample("logits", values=("value_ext", "value_int"))``;
  ``phases = [Phase("train", OnPolicy(rollout_steps, epochs, minibatch_size))]``;
  ``on_rollout(ctx, batch)`` computes intrinsic rewards, advantages and returns (stored as
  new ``batch.extras`` keys) and updates the observation-normalisation statistics, which
  ``state_dict`` returns so checkpoints keep them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

import gymnasium as gym
import numpy as np
import torch

from agents.core.batch import Loss
from agents.core.layout import with_layout
from agents.core.losses import r2d2_loss
from agents.core.mirror import env_reflection
from agents.core.networks import HeadSpec, NetworkSpec, RecurrentNetwork
from agents.core.obs_norm import random_steps_spec
from agents.core.policy import EpsilonGreedy, Selector, epsilon_ladder
from agents.core.preprocess import ObsSpec, Preprocessor
from agents.core.schedules import ReplayRatio, Schedule
from agents.core.sequences import SequenceBatch
from agents.core.targets import HardCopy, TargetRule
from demostudio.episode import make_env_with_kwargs

if TYPE_CHECKING:
    from agents.core.actor import FinishedEpisode
    from agents.core.mixing import DataSource
    from agents.core.run import RunContext


class EnvInfo(NamedTuple):
    """The training env as the agent sees it (a probe env: spaces only)."""

    env_id: str
    env: gym.Env
    preprocess: Preprocessor

    @property
    def num_actions(self) -> int:
        return int(self.env.action_space.n)


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


class Agent:
    """Base agent (its defaults are R2D2's). Subclasses set ``name`` and
    ``config_cls`` and override what differs."""

    name: ClassVar[str] = "r2d2"
    config_cls: ClassVar[type]
    acting_network: ClassVar[str] = "main"
    """The network the acting policy runs (its weights go to the actors)."""
    uses_replay: ClassVar[bool] = True
    """The run keeps an agent replay filled by the actors (the main data source)."""
    final_eval_always: ClassVar[bool] = False
    """Evaluate at the end even when eval_every is 0 (BC)."""
    resume_by_default: ClassVar[bool] = False
    """``resume`` defaults to on (RND-PPO, as its source): a run folder without checkpoints
    then starts fresh instead of being an error; ``--no-resume`` still refuses a folder
    that has checkpoints."""

    def __init__(self, cfg: Any):
        self.cfg = cfg
        self._network_obs_spec: ObsSpec | None = None

    def configure(self, env: EnvInfo) -> None:
        """Settle the config fields whose default depends on the env (a default per
        observation space) before the networks and the loss are built; config.json records
        the settled values. Default: nothing depends on the env."""

    # --- networks -------------------------------------------------------------------------
    def heads(self) -> dict[str, HeadSpec]:
        """Heads of the ``main`` network."""
        return {"q": HeadSpec("dueling_q")}

    def network_specs(self, env: EnvInfo) -> dict[str, NetworkSpec]:
        return {"main": self.main_spec(env, self.network_obs_spec(env, env.preprocess.spec))}

    def main_spec(self, env: EnvInfo, obs_spec: ObsSpec) -> NetworkSpec:
        """The ``main`` network's spec on ``obs_spec``: the config's torso, :meth:`heads`."""
        cfg = self.cfg
        mirror = env_reflection(env.env_id) if cfg.mirror == "env" else None
        grid = getattr(cfg, "grid_encoder", "conv")  # RND-PPO's torso has no choice of it
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
        network must be a RecurrentNetwork (its spec is what restore rebuilds)."""
        return {k: RecurrentNetwork(s) for k, s in self.network_specs(env).items()}

    def target_rules(self) -> dict[str, TargetRule]:
        return {"main": HardCopy(self.cfg.target_update_every)}

    def param_groups(self, networks: Mapping[str, torch.nn.Module]) -> list[dict] | None:
        """Adam parameter groups over the trainable parameters of ``networks`` (a learning
        rate per part: RND-PPO's policy, values, predictor); None: one group at
        ``cfg.learning_rate``."""
        return None

    def loss(self) -> Loss:
        return r2d2_loss

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
    def acting_selector(self, n: int) -> Selector:
        cfg = self.cfg
        return EpsilonGreedy(epsilon_ladder(n, cfg.epsilon_base, cfg.epsilon_alpha))

    def eval_selector(self, epsilon: float) -> Selector:
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
        """Extra named sources mixed into batches besides the agent replay."""
        return []

    def phases(self) -> list[Phase]:
        cfg = self.cfg
        return [
            Phase(
                "train",
                ReplayRatio(
                    cfg.env_steps_per_update, cfg.batch_size, cfg.min_replay, cfg.total_env_steps
                ),
                eval_every=cfg.eval_every,
                checkpoint_every=cfg.checkpoint_every,
            )
        ]

    # --- hooks ----------------------------------------------------------------------------
    def start(self, ctx: RunContext) -> None:
        """Called once the learner, replay and sources exist (fresh or resumed run)."""

    def on_phase_start(self, ctx: RunContext, phase: Phase) -> None: ...

    def on_phase_end(self, ctx: RunContext, phase: Phase) -> None: ...

    def on_episode(self, ctx: RunContext, episode: FinishedEpisode) -> None:
        """Called for every finished agent episode."""

    def on_rollout(self, ctx: RunContext, batch: SequenceBatch) -> SequenceBatch:
        """On-policy: the rollout's segments before the epochs (add advantages, returns)."""
        return batch

    def after_iteration(self, ctx: RunContext) -> bool:
        """Called after every schedule iteration (after logging); True stops the run."""
        return False

    def finish(self, ctx: RunContext) -> None:
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

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore what :meth:`state_dict` gave."""


__all__ = ["Agent", "EnvInfo", "Phase"]

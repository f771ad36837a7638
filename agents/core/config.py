"""Config groups: each field is declared once, in the group it belongs to, with a one-line
docstring that becomes its ``demostudio train ALGO --help`` text.

An algorithm's config is a flat dataclass composed from groups by inheritance, so the CLI
stays flat (``--hidden``, ``--demos``, ...)::

    @dataclass
    class R2D2Config(ReplayAgentConfig): ...              # run + actors + network + ...

    @dataclass
    class BCConfig(RunConfig, NetworkConfig, SequenceConfig, OptimConfig, DemoConfig,
                   BCSettings): ...

A subclass may change a field's default by declaring it again without a docstring (the
group's docstring stays the help text). ``validate()`` runs the ``check`` of every group
in the config, so each group checks its own fields once.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar

from agents.core.replay import MIXABLE_KINDS, ReplayKind


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def require(cfg: object, names: tuple[str, ...], low: float, strict: bool = False) -> None:
    """ValueError naming the flag unless each field is ``>= low`` (``> low`` if strict)."""
    for name in names:
        v = getattr(cfg, name)
        if v is None:
            continue
        if (v <= low) if strict else (v < low):
            raise ValueError(f"{_flag(name)}: expected {'>' if strict else '>='} {low:g}, got {v}")


def require_unit(cfg: object, names: tuple[str, ...]) -> None:
    for name in names:
        v = getattr(cfg, name)
        if v is not None and not 0.0 <= v <= 1.0:
            raise ValueError(f"{_flag(name)}: expected in [0, 1], got {v}")


def _number(v: float) -> str:
    return str(v) if isinstance(v, int) else f"{v:g}"


@dataclass
class ConfigGroup:
    """Base of every group: ``validate`` runs each group's own ``check`` once."""

    limits: ClassVar[dict[str, float]] = {}
    """Upper bounds of this group's fields (sizes, rates, counts of updates or steps), checked
    by ``validate`` before any group's ``check``: a typo such as ``--hidden 40000`` is refused
    in one line instead of allocating gigabytes, ``--pretrain-updates 1000000000000`` instead
    of running for years. Each group declares its own fields' bounds once; an algorithm's
    config inherits them with the groups."""

    diverging: ClassVar[tuple[str, ...]] = ()
    """This group's fields that make the learner diverge when set too high (or too low, such
    as ``adam_eps``): when a loss becomes non-finite, those given a value other than their
    default are named as the likely cause. Declared and inherited like ``limits``."""

    def check(self) -> None:
        """Raise ValueError naming the flag for values of this group that cannot work."""

    def advice(self) -> list[str]:
        """Lines warning of values that work but waste the run (learning never starting);
        ``warnings()`` gathers every group's."""
        return []

    @classmethod
    def upper_bounds(cls) -> dict[str, float]:
        """Every group's ``limits`` for the fields ``cls`` has."""
        names = {f.name for f in dataclasses.fields(cls)}
        bounds: dict[str, float] = {}
        for klass in reversed(cls.__mro__):
            bounds.update(klass.__dict__.get("limits", {}))
        return {k: v for k, v in bounds.items() if k in names}

    @classmethod
    def divergence_fields(cls) -> frozenset[str]:
        """Every group's ``diverging`` fields that ``cls`` has."""
        names = {f.name for f in dataclasses.fields(cls)}
        found: set[str] = set()
        for klass in cls.__mro__:
            found.update(klass.__dict__.get("diverging", ()))
        return frozenset(found & names)

    def validate(self) -> None:
        """Every number finite (a saved config may hold NaN) and within its group's limits,
        then each group's check."""
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"{_flag(f.name)}: expected a finite number, got {value}")
        for name, high in self.upper_bounds().items():
            value = getattr(self, name)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value > high:
                high_text, value_text = _number(high), _number(value)
                raise ValueError(f"{_flag(name)}: expected <= {high_text}, got {value_text}")
        for fn in self._group_methods("check"):
            fn(self)

    def warnings(self) -> list[str]:
        """Every group's ``advice``: one line each, for the command to print."""
        return [line for fn in self._group_methods("advice") for line in fn(self)]

    def _group_methods(self, name: str) -> list[Any]:
        seen: list[Any] = []
        for klass in reversed(type(self).__mro__):
            fn = klass.__dict__.get(name)
            if fn is not None and fn not in seen:
                seen.append(fn)
        return seen


@dataclass
class RunConfig(ConfigGroup):
    """The run: env, seed, device, output folder, logging and evaluation."""

    # --- env -------------------------------------------------------------------------------
    env: str | None = None
    """Gymnasium env id to train on (required unless every demo was recorded on one env)."""
    env_kwargs: str = "{}"
    """Extra gymnasium.make keyword arguments as JSON, e.g. '{"max_episode_steps": 500}'
    (no render_mode: each command chooses its own; a saved config's is left out)."""
    # --- run -------------------------------------------------------------------------------
    seed: int = 0
    """Seed for envs, sampling, exploration, network init and evaluation episodes."""
    # --- env -------------------------------------------------------------------------------
    fixed_layout: bool = False
    """Reset every episode (training and evaluation) with --seed: one layout of a
    procedurally generated env such as MiniGrid, the 'singleton' setting of the RND paper."""
    # --- run -------------------------------------------------------------------------------
    device: Literal["auto", "cpu", "cuda"] = "auto"
    """Torch device for the learner and actors (auto: cuda when available)."""
    run_dir: Path | None = None
    """Output folder (metrics, TensorBoard, checkpoints); default runs/<algo>-<env>-s<seed>."""
    progress: bool = True
    """Show a progress bar."""
    tensorboard: bool = True
    """Write TensorBoard scalars to run_dir/tb."""
    torch_threads: int = 1
    """torch.set_num_threads for training (small nets are fastest single-threaded)."""

    # --- evaluation and gate ---------------------------------------------------------------
    eval_every: int = 5_000
    """Evaluate the greedy policy every this many steps of the run's clock (env steps; updates
    for offline algorithms) (0: only at the end)."""
    eval_episodes: int = 5
    """Episodes per evaluation."""
    eval_epsilon: float = 0.0
    """Exploration epsilon during evaluation."""

    limits: ClassVar[dict[str, float]] = {"torch_threads": 1024, "eval_episodes": 100_000}

    def check(self) -> None:
        require(self, ("eval_episodes", "torch_threads"), 1)
        require(self, ("eval_every",), 0)
        require_unit(self, ("eval_epsilon",))
        kwargs = self._parsed_kwargs()
        if not isinstance(kwargs, dict):
            raise ValueError(f"--env-kwargs: expected a JSON object, got {self.env_kwargs!r}")
        if "render_mode" in kwargs:
            raise ValueError(
                "--env-kwargs: expected no render_mode (each command chooses how its envs "
                f"render: `demostudio watch RUN` shows the agent), got {self.env_kwargs!r}"
            )

    def _parsed_kwargs(self) -> Any:
        try:
            return json.loads(self.env_kwargs or "{}")
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"--env-kwargs: expected JSON, got {self.env_kwargs!r} ({exc})"
            ) from None

    def make_kwargs(self) -> dict[str, Any]:
        """The kwargs without ``render_mode``: how an env renders is the command's to say
        (none in training and evaluate, a window in watch), never a saved config's."""
        kwargs = self._parsed_kwargs()
        if isinstance(kwargs, dict):
            kwargs.pop("render_mode", None)
        return kwargs


@dataclass
class InteractConfig(ConfigGroup):
    """Runs that step envs: the budget, checkpoints and --resume."""

    # --- run -------------------------------------------------------------------------------
    total_env_steps: int = 100_000
    """Stop after this many environment steps (all actors together)."""
    resume: bool = False
    """Continue from the checkpoint with the most env steps in run_dir (with its replay if
    --save-replay was on); `demostudio train` reuses the run's saved config, changing only
    the flags given."""
    save_replay: bool = False
    """Save the agent replay (and episode memory) with every checkpoint, as
    checkpoints/replay.npz, so --resume continues with it; large for image observations."""
    checkpoint_every: int = 25_000
    """Save a checkpoint every this many env steps (and always at the end)."""
    checkpoint_minutes: float = 5.0
    """Also save a checkpoint when this many minutes have passed since the last one, so that
    a kill -9 or a power cut costs at most that much work however slow the task (0: off)."""
    keep_checkpoints: int = 3
    """How many periodic checkpoints to keep (the final one is always kept)."""
    # --- evaluation and gate ---------------------------------------------------------------
    stop_when: Literal["auto", "demos", "threshold", "off"] = "auto"
    """When the run has learned and stops before its budget (the budget is then a cap):
    auto: at the demos' mean return with demos, else at the env's reward threshold (CartPole:
    475), else never; demos or threshold: that one; off: the whole budget runs. A given
    --stop-return takes its place (agents/core/stop_rule.py)."""
    stop_return: float | None = None
    """Stop once an evaluation's mean return reaches this (instead of --stop-when's target)."""
    stop_evals: int = 1
    """Stop once the mean of the last this many evaluations' returns reaches the target (1:
    the first evaluation that does; more asks for a result that holds)."""

    gate_episodes: int = 0
    """Deployment gate (0: off): before an evaluation the learner's network plays up to this
    many test episodes (env steps of the budget, not learned from) and becomes the deployed
    network, the one evaluation, evaluate and watch play, when every one returns at least
    the best test episode seen so far minus --gate-margin (until one does, they play the
    network with the highest worst episode over a whole test); a test stops once it can
    earn neither (agents/core/gate.py)."""
    gate_margin: float = 0.0
    """With --gate-episodes: how far below the best test episode seen each of a challenger's
    test episodes may be and it still be deployed (0 for a return with a known top, as
    CartPole's 500; about the spread of a good network's returns for a noisy one, else none
    is ever deployed)."""
    gate_share: float = 0.25
    """With --gate-episodes: once a network has passed, the most of the env steps the tests
    may take; a test starts only while the tests so far have taken at most this share (the
    learner keeps the rest). A test begun before the budget is spent plays to its end (up to
    one test past it)."""
    gate_horizon: float = 1.0
    """With --gate-episodes: the test episodes' step limit as a multiple of the env's own
    (gymnasium's TimeLimit; 1: as evaluation plays). Longer tests find a network that holds
    only until the limit cuts it off (CartPole: a cart drifting to the track's edge)."""

    limits: ClassVar[dict[str, float]] = {"gate_episodes": 10_000, "gate_horizon": 1_000,
                                          "total_env_steps": 100_000_000_000,
                                          "checkpoint_minutes": 10_000_000}  # fmt: skip

    def check(self) -> None:
        require(self, ("total_env_steps", "checkpoint_every"), 1)
        require(self, ("keep_checkpoints", "gate_episodes", "gate_margin", "checkpoint_minutes"), 0)
        require(self, ("stop_evals", "gate_horizon"), 1)
        if not 0.0 < self.gate_share <= 1.0:
            raise ValueError(f"--gate-share: expected in (0, 1], got {self.gate_share}")

    def advice(self) -> list[str]:
        every = getattr(self, "eval_every", 0)  # the gate tests before each evaluation
        if self.gate_episodes and not 0 < every < self.total_env_steps:
            return [f"--gate-episodes {self.gate_episodes} has no effect: the gate tests before "
                    f"each evaluation and --eval-every {every} gives none within "
                    f"--total-env-steps {self.total_env_steps} (lower --eval-every)"]  # fmt: skip
        return []


@dataclass
class ActorProcsConfig(ConfigGroup):
    """Actors in other processes (Ray): the pool's settings, for any algorithm's actors."""

    # --- distributed -----------------------------------------------------------------------
    actor_procs: int = 0
    """Step the actors in this many Ray processes, each with --num-actors envs and a CPU copy
    of the policy; learner and replay stay here (0: actors in this process)."""
    ray_address: str | None = None
    """Join the Ray cluster at this address (host:port) instead of starting a local one."""
    ray_auth: bool = True
    """Ray token authentication (RAY_AUTH_MODE=token); turn it off only on a trusted network."""
    weight_sync_every: int = 10
    """With --actor-procs: send the learner's weights to the actor processes every this many
    updates (one ray.put per sync)."""
    actor_chunk_steps: int = 50
    """With --actor-procs: env steps per env an actor process takes per request; experience
    comes back as the sequences those steps completed."""

    limits: ClassVar[dict[str, float]] = {"actor_procs": 256, "actor_chunk_steps": 100_000}

    def check(self) -> None:
        require(self, ("weight_sync_every", "actor_chunk_steps"), 1)
        require(self, ("actor_procs",), 0)
        if self.ray_address and not self.actor_procs:
            raise ValueError(
                f"--ray-address: expected with --actor-procs N (N >= 1), got --actor-procs "
                f"{self.actor_procs}"
            )


@dataclass
class ActorConfig(ActorProcsConfig):
    """Vectorized actors with an Ape-X epsilon ladder, in this process or in Ray processes."""

    # --- algorithm -------------------------------------------------------------------------
    num_actors: int = 4
    """Vectorized environments stepped together, each with its own epsilon (per actor process
    with --actor-procs)."""
    epsilon_base: float = 0.4
    """Ape-X ladder: actor i explores with epsilon_base ** (1 + epsilon_alpha * i / (N - 1))."""
    epsilon_alpha: float = 7.0
    """Ape-X ladder exponent spread."""

    limits: ClassVar[dict[str, float]] = {"num_actors": 1024}

    def check(self) -> None:
        require(self, ("num_actors",), 1)
        require_unit(self, ("epsilon_base",))
        require(self, ("epsilon_alpha",), 0)


@dataclass
class NetworkWidths(ConfigGroup):
    """The torso's widths (an algorithm that says otherwise whether it is recurrent, such as
    RND-PPO's ``--rnn-layers``, takes only these)."""

    # --- network ---------------------------------------------------------------------------
    hidden: int = 64
    """Width of the encoder and head layers."""
    lstm: int = 64
    """LSTM state size (the core layer's width when not recurrent)."""
    policy_obs_norm_steps: int = 0
    """Vector observations: the network standardises its input by the mean and std of this
    many uniformly random steps in one env, taken before the networks are built (the same
    seed gives the same statistics on resume) and stored in the network spec
    (:mod:`agents.core.obs_norm`). 0: the core's scaling (bounded dimensions mapped to
    [-1, 1] by the space's bounds, unbounded ones as they are)."""
    mirror: Literal["none", "env"] = "none"
    """env: make the network exactly symmetric under the env's known reflection (CartPole,
    Acrobot, LunarLander; agents.core.mirror): twice the torso's cost."""

    limits: ClassVar[dict[str, float]] = {
        "hidden": 4096,
        "lstm": 4096,
        "policy_obs_norm_steps": 1_000_000,
    }

    def check(self) -> None:
        require(self, ("hidden", "lstm"), 1)
        require(self, ("policy_obs_norm_steps",), 0)


@dataclass
class NetworkConfig(NetworkWidths):
    """The recurrent torso (encoder + LSTM) shared by every head."""

    # --- network ---------------------------------------------------------------------------
    recurrent: bool = True
    """LSTM core fed the previous action and reward; off: a feed-forward network."""
    grid_encoder: Literal["conv", "mlp"] = "conv"
    """MiniGrid views: conv (one-hot, two small convolutions) or mlp (the flattened one-hot
    through two layers: a fifth of the cost of an update on CPU)."""


@dataclass
class SequenceConfig(ConfigGroup):
    """How episodes are cut into sequences (see agents.core.sequences)."""

    # --- algorithm -------------------------------------------------------------------------
    burn_in: int = 10
    """Steps at the start of each sequence used only to refresh the stored LSTM state."""
    trace: int = 20
    """Steps of each sequence that are learned from (sequence = burn_in + trace + 1)."""
    period: int = 10
    """A new sequence starts every this many steps (overlap = length - period)."""
    end_behavior: Literal["zero_pad", "align_end"] = "zero_pad"
    """Sequences at an episode end: zero-padded, or moved back to end on the last step."""

    @property
    def sequence_length(self) -> int:
        return self.burn_in + self.trace + 1

    limits: ClassVar[dict[str, float]] = {"burn_in": 1000, "trace": 1000}

    def check(self) -> None:
        require(self, ("trace", "period"), 1)
        require(self, ("burn_in",), 0)
        if self.period > self.trace:
            # both flags named: either may be the one given (the other its default)
            raise ValueError(
                f"--period {self.period} / --trace {self.trace}: expected --period <= --trace "
                f"so that every step is learned from (give a --period of {self.trace} or "
                f"less, or a --trace of {self.period} or more)"
            )


@dataclass
class OptimConfig(ConfigGroup):
    """The learner's optimiser and batch size."""

    # --- algorithm -------------------------------------------------------------------------
    batch_size: int = 32
    """Sequences per learner update."""
    learning_rate: float = 1e-3
    """Adam learning rate."""
    adam_eps: float = 1e-3
    """Adam epsilon."""
    adam_beta1: float = 0.9
    """Adam's beta1: the decay of its running mean of gradients (momentum). 0: each step
    follows the current gradient alone, scaled by the running RMS (RMSProp with Adam's
    bias correction)."""
    max_grad_norm: float = 10.0
    """Gradient norm clip."""

    limits: ClassVar[dict[str, float]] = {"batch_size": 4096, "learning_rate": 1.0, "adam_eps": 1.0}
    diverging: ClassVar[tuple[str, ...]] = ("learning_rate", "adam_eps", "max_grad_norm")
    learning_rate_field: ClassVar[str] = "learning_rate"
    """The field that sets the learner's ``learning_rate``: the flag a diverged run is told
    to lower when none of the ``diverging`` fields was changed."""

    def check(self) -> None:
        require(self, ("batch_size",), 1)
        require(self, ("learning_rate", "adam_eps", "max_grad_norm"), 0.0, strict=True)
        if not 0.0 <= self.adam_beta1 < 1.0:
            raise ValueError(f"{_flag('adam_beta1')}: expected in [0, 1), got {self.adam_beta1}")


@dataclass
class ReplayConfig(ConfigGroup):
    """The prioritized agent replay and the replay ratio."""

    # --- replay ----------------------------------------------------------------------------
    replay_capacity: int = 10_000
    """Agent replay size in sequences."""
    min_replay: int = 64
    """Sequences in the agent replay before learning starts."""
    env_steps_per_update: float = 4.0
    """Replay ratio: one learner update per this many env steps (all actors together)."""
    priority_alpha: float = 0.6
    """Priority exponent alpha (0 = uniform sampling)."""
    priority_beta: float = 0.6
    """Importance-weight exponent beta."""
    priority_beta_final: float | None = None
    """Anneal --priority-beta linearly to this over --priority-beta-steps env steps, then hold
    it (Schaul et al. 2016 anneal beta to 1: full correction once learning settles); none: a
    fixed beta. One beta serves every buffer of a batch (agent and demo replay)."""
    priority_beta_steps: int = 0
    """Env steps over which --priority-beta anneals to --priority-beta-final."""
    priority_eta: float = 0.9
    """Sequence priority = eta * max|delta| + (1 - eta) * mean|delta|."""
    replay_kind: ReplayKind = "proportional"
    """How the agent replay is sampled: uniform, proportional (p^alpha), rank (1/rank^alpha)
    or greedy (the highest priorities first)."""
    replay_uniform_share: float = 0.0
    """Share of the agent replay's draws made uniformly, the rest by --replay-kind
    (proportional or rank): P(i) = (1 - u) P_kind(i) + u / N, the importance weights from that
    P(i). Replays sequences whose stored priorities went stale (a priority is refreshed only
    when its sequence is replayed)."""

    limits: ClassVar[dict[str, float]] = {"replay_capacity": 10_000_000}

    def check(self) -> None:
        require(self, ("replay_capacity",), 1)
        require(self, ("min_replay",), 0)
        if self.min_replay > self.replay_capacity:
            raise ValueError(
                f"--min-replay: expected <= --replay-capacity ({self.replay_capacity}): "
                f"learning starts once the agent replay holds --min-replay sequences, so it "
                f"would never start, got {self.min_replay}"
            )
        require(self, ("env_steps_per_update",), 0.0, strict=True)
        require_unit(
            self,
            (
                "priority_alpha",
                "priority_eta",
                "priority_beta",
                "priority_beta_final",
                "replay_uniform_share",
            ),
        )
        if self.replay_uniform_share and self.replay_kind not in MIXABLE_KINDS:
            raise ValueError(
                f"--replay-uniform-share: expected 0 with --replay-kind {self.replay_kind} "
                f"(a share mixes uniform draws into proportional or rank), got "
                f"{self.replay_uniform_share}"
            )
        require(self, ("priority_beta_steps",), 0)

    def advice(self) -> list[str]:
        budget = getattr(self, "total_env_steps", None)
        if budget is None:
            return []
        out = []
        period = int(getattr(self, "period", 1))
        start = self.min_replay * period  # about one sequence per --period env steps
        if self.min_replay and start > budget:
            out.append(
                f"--min-replay {self.min_replay}: learning starts once the agent replay holds "
                f"{self.min_replay} sequences (about one per --period {period} env steps: "
                f"~{start:,} env steps), but --total-env-steps is {budget:,}: the run may end "
                f"without learning from its own experience (lower --min-replay)"
            )
        if self.env_steps_per_update > budget:
            out.append(
                f"--env-steps-per-update {self.env_steps_per_update:g}: one update per that "
                f"many env steps, more than --total-env-steps {budget:,}: the run ends "
                f"without an update from its own experience"
            )
        return out


@dataclass
class DiscountConfig(ConfigGroup):
    """The discount of returns (every algorithm that bootstraps from one value)."""

    # --- algorithm -------------------------------------------------------------------------
    discount: float = 0.99
    """Discount factor gamma."""

    def check(self) -> None:
        if not 0.0 < self.discount <= 1.0:
            raise ValueError(f"--discount: expected in (0, 1], got {self.discount}")


@dataclass
class QLearningConfig(DiscountConfig):
    """n-step double Q-learning targets and the target network."""

    # --- algorithm -------------------------------------------------------------------------
    n_step: int = 5
    """n of the n-step double-Q targets."""
    value_rescaling: bool = True
    """Use h(x) = sign(x)(sqrt(|x|+1)-1) + eps*x on targets (R2D2)."""
    rescale_eps: float = 1e-3
    """eps of the value rescaling h."""
    target_update_every: int = 500
    """Copy the online network to the target network every this many updates."""

    limits: ClassVar[dict[str, float]] = {"n_step": 1000}
    diverging: ClassVar[tuple[str, ...]] = ("rescale_eps",)

    def check(self) -> None:
        require(self, ("n_step", "target_update_every"), 1)
        require(self, ("rescale_eps",), 0.0, strict=True)


@dataclass
class DemoConfig(ConfigGroup):
    """Demonstrations read from episode files."""

    # --- demos -----------------------------------------------------------------------------
    demos: tuple[Path, ...] = ()
    """Demo episode files or folders (searched recursively for *.h5)."""
    demo_env_override: str | None = None
    """Accept demos recorded on this env id instead of --env (spaces must still match)."""
    demo_steps: Literal["person", "all"] = "person"
    """Which steps are demonstrations. person: only the steps a person took where a file has
    any (a take-over file gives the person's stretches, the agent's steps before each being
    burn-in context; a keyboard recording is all the person's anyway), and every step of a
    file no person acted in (a script's or an agent's demos). all: every step of every file,
    the agent's steps in take-over files too."""

    demos_required: ClassVar[bool] = True
    """A run needs --demos (False: ``demostudio coach``, whose corrections fill them;
    RND-PPO, whose demo pre-training is optional; Reactor, where --demos adds a demo
    replay)."""

    def check(self) -> None:
        if self.demos_required and not self.demos:
            raise ValueError("--demos: expected at least one demo file or folder, got none")


@dataclass
class DemoReplayConfig(ConfigGroup):
    """The demos kept in a prioritized replay of their own (R2D3, DQfD, SQIL)."""

    # --- demos -----------------------------------------------------------------------------
    demo_capacity: int = 50_000
    """Demo replay size in sequences (demos are never evicted)."""
    demo_replay_kind: ReplayKind = "proportional"
    """How the demo replay is sampled: uniform, proportional, rank or greedy (as
    --replay-kind)."""

    limits: ClassVar[dict[str, float]] = {"demo_capacity": 10_000_000}

    def check(self) -> None:
        require(self, ("demo_capacity",), 1)


@dataclass
class MarginConfig(ConfigGroup):
    """DQfD's large-margin classification loss on demo steps (DQfD; R2D3 optionally)."""

    # --- algorithm -------------------------------------------------------------------------
    margin: float = 0.8
    """Large-margin classification: margin l(a_E, a) for actions a other than the demo's."""
    lambda_margin: float = 1.0
    """Weight lambda2 of the large-margin loss on demo steps (0: off)."""

    diverging: ClassVar[tuple[str, ...]] = ("lambda_margin",)

    def check(self) -> None:
        require(self, ("margin", "lambda_margin"), 0)


@dataclass
class DemoMixConfig(ConfigGroup):
    """A demo replay mixed into batches by a fixed or annealed ratio (R2D3, SQIL)."""

    # --- demos -----------------------------------------------------------------------------
    demo_ratio: float = 0.25
    """Probability that a batch element comes from the demo replay (initial value)."""
    demo_ratio_final: float | None = None
    """Anneal the demo ratio linearly to this value (none: keep it fixed)."""
    demo_ratio_steps: int = 50_000
    """Env steps over which the demo ratio is annealed."""

    def check(self) -> None:
        require_unit(self, ("demo_ratio", "demo_ratio_final"))
        require(self, ("demo_ratio_steps",), 0)


@dataclass
class ReplayAgentConfig(
    QLearningConfig,
    ReplayConfig,
    OptimConfig,
    SequenceConfig,
    NetworkConfig,
    ActorConfig,
    InteractConfig,
    RunConfig,
):
    """Recurrent replay training (actors + prioritized sequence replay + recurrent learner)."""


CoreConfig = ReplayAgentConfig
"""The former name of :class:`ReplayAgentConfig` (still used by a benchmark)."""


def config_to_dict(cfg: Any) -> dict[str, Any]:
    """JSON-able dict (Paths as strings, tuples as lists)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(cfg):
        v = getattr(cfg, f.name)
        if isinstance(v, Path):
            v = str(v)
        elif isinstance(v, tuple):
            v = [str(x) if isinstance(x, Path) else x for x in v]
        out[f.name] = v
    return out


C = TypeVar("C")


def config_from_dict(cls: type[C], values: dict[str, Any]) -> C:
    """A config of ``cls`` from a saved dict (``config_to_dict``'s output): unknown keys are
    ignored and missing ones keep their defaults (a checkpoint of an older version)."""
    fields = {f.name: f for f in dataclasses.fields(cls)}
    kwargs: dict[str, Any] = {}
    for name, v in values.items():
        if name not in fields:
            continue
        if isinstance(v, list):
            v = tuple(Path(x) if name == "demos" else x for x in v)
        elif name == "run_dir" and v is not None:
            v = Path(v)
        kwargs[name] = v
    return cls(**kwargs)


__all__ = [
    "ActorConfig",
    "ActorProcsConfig",
    "ConfigGroup",
    "CoreConfig",
    "DemoConfig",
    "DemoMixConfig",
    "DemoReplayConfig",
    "DiscountConfig",
    "InteractConfig",
    "MarginConfig",
    "NetworkConfig",
    "NetworkWidths",
    "OptimConfig",
    "QLearningConfig",
    "ReplayAgentConfig",
    "ReplayConfig",
    "RunConfig",
    "SequenceConfig",
    "config_from_dict",
    "config_to_dict",
    "require",
    "require_unit",
]

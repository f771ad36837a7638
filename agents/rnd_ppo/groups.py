"""RND-PPO's own config groups, each declaring its fields once with the docstring that is its
``--help``: PPO's rollouts, returns, loss and acting (:class:`PPOSettings`), RND's intrinsic
reward (:class:`RNDSettings`), the RND paper's Atari settings (:class:`AtariSettings`) and
the demos' behaviour-cloning start (:class:`DemoPretrainSettings`). :mod:`agents.rnd_ppo.config`
composes them with the core's groups."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

from agents.core.config import ConfigGroup, RunConfig, require
from agents.rnd_ppo.full_grid import FULL_GRID


def is_ale(env_id: str) -> bool:
    """True for Arcade Learning Environment ids (``ALE/Pong-v5``, ``PongNoFrameskip-v4``)."""
    return env_id.startswith("ALE/") or "NoFrameskip" in env_id


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _require(ok: bool, name: str, expected: str, value: object) -> None:
    if not ok:
        raise ValueError(f"{_flag(name)}: expected {expected}, got {value}")


@dataclass
class PPOSettings(ConfigGroup):
    """Recurrent PPO with an extrinsic and an intrinsic value head."""

    # --- algorithm: PPO rollouts and epochs ------------------------------------------------
    num_envs: int = 32
    """Environments stepped together (per actor process with --actor-procs); a rollout is
    --rollout-length steps of every env."""
    rollout_length: int = 128
    """Steps per environment in each rollout (the paper's "rollout length")."""
    segment_length: int = 64
    """Steps per training segment (truncated backprop through time); the LSTM state at
    each segment start is stored at rollout time. Must divide --rollout-length."""
    update_epochs: int = 4
    """Optimisation epochs over each rollout."""
    num_minibatches: int = 4
    """Minibatches per epoch, each of whole segments (a minibatch holds a rollout's
    full-length segments / this; segments cut short by episode ends add minibatches)."""
    rnn_layers: int = 1
    """LSTM layers of the policy's torso: 1 = recurrent (fed the previous action and
    reward), 0 = a feed-forward (CNN/MLP) policy."""

    # --- algorithm: PPO returns and advantages ---------------------------------------------
    gamma_ext: float = 0.999
    """Discount of the extrinsic return (episodic)."""
    gamma_int: float = 0.99
    """Discount of the intrinsic return (non-episodic: runs on across episode ends)."""
    gae_lambda: float = 0.95
    """lambda of GAE(lambda), both heads."""
    ext_coef: float = 2.0
    """Weight of the extrinsic advantage in the combined advantage."""
    int_coef: float = 1.0
    """Weight of the intrinsic advantage in the combined advantage."""
    ext_reward_clip: float = 1.0
    """Extrinsic rewards are clipped to [-x, x] for learning (0 = no clipping)."""
    ext_reward_scale: float = 1.0
    """Extrinsic rewards are multiplied by this for learning, after the clip. A reward on
    every step (MountainCar's -1) gives returns near -1 / (1 - gamma_ext); regressing them
    through the torso the policy shares swamps its features (0.01 keeps them near -1)."""
    norm_adv: bool = True
    """Normalise the combined advantage to mean 0, std 1 in each minibatch."""

    # --- algorithm: PPO loss and optimisation ----------------------------------------------
    clip_range: float = 0.1
    """PPO's ratio clip epsilon: the ratio is clipped to [1 - x, 1 + x]."""
    clip_value: bool = False
    """Also clip each value head's change to +-clip_range (PPO2's value clipping)."""
    ent_coef: float = 0.001
    """Weight of the entropy bonus."""
    vf_coef: float = 0.5
    """Weight of the value losses (extrinsic + intrinsic)."""
    max_grad_norm: float = 0.0
    """Gradient norm clip for every network (0 = no clipping)."""
    lr_policy: float = 1e-4
    """Adam learning rate of the policy (torso and policy head)."""
    lr_value: float = 1e-4
    """Adam learning rate of the value heads."""
    lr_predictor: float = 1e-4
    """Adam learning rate of the RND predictor."""

    # --- algorithm: PPO acting and stopping ------------------------------------------------
    epsilon_greedy: float = 0.0
    """Take a uniformly random action with this probability on top of the policy (the
    behaviour log-probability is that of the mixture)."""
    target_rollout_return: float | None = None
    """End training once the mean extrinsic return of the episodes finished in one
    rollout reaches this (none: run for the step budget)."""

    limits: ClassVar[dict[str, float]] = {
        "num_envs": 1024,
        "rollout_length": 100_000,
        "update_epochs": 1000,
        "lr_policy": 1.0,
        "lr_value": 1.0,
        "lr_predictor": 1.0,
    }
    diverging: ClassVar[tuple[str, ...]] = (
        "ent_coef",
        "vf_coef",
        "max_grad_norm",
        "lr_policy",
        "lr_value",
        "lr_predictor",
    )

    def check(self) -> None:
        """Raise ValueError naming the flag for values that cannot work."""
        values = vars(self)  # the fields checked by name below
        for name in ("num_envs", "rollout_length", "segment_length", "update_epochs"):
            _require(values[name] >= 1, name, ">= 1", values[name])
        _require(self.num_minibatches >= 1, "num_minibatches", ">= 1", self.num_minibatches)
        _require(
            self.rollout_length % self.segment_length == 0,
            "segment_length",
            f"a divisor of --rollout-length ({self.rollout_length})",
            self.segment_length,
        )
        per_env = self.rollout_length // self.segment_length
        segments = self.num_envs * per_env
        _require(
            self.num_minibatches <= segments,
            "num_minibatches",
            f"<= the segments per rollout ({segments} = --num-envs {self.num_envs} x "
            f"--rollout-length {self.rollout_length} / --segment-length {self.segment_length}; "
            f"lower --num-minibatches or give more segments)",
            self.num_minibatches,
        )
        _require(
            self.rnn_layers in (0, 1),
            "rnn_layers",
            "0 (feed-forward) or 1 (LSTM; stacked LSTM layers are not built)",
            self.rnn_layers,
        )
        for name in ("gamma_ext", "gamma_int"):
            _require(0.0 < values[name] <= 1.0, name, "in (0, 1]", values[name])
        _require(0.0 <= self.gae_lambda <= 1.0, "gae_lambda", "in [0, 1]", self.gae_lambda)
        _require(0.0 < self.clip_range < 1.0, "clip_range", "in (0, 1)", self.clip_range)
        _require(
            0.0 <= self.epsilon_greedy <= 1.0, "epsilon_greedy", "in [0, 1]", self.epsilon_greedy
        )
        _require(self.ext_reward_scale > 0, "ext_reward_scale", "> 0", self.ext_reward_scale)
        for name in ("ext_coef", "int_coef", "ext_reward_clip", "ent_coef", "vf_coef"):
            _require(values[name] >= 0, name, ">= 0", values[name])
        _require(self.max_grad_norm >= 0, "max_grad_norm", ">= 0", self.max_grad_norm)
        for name in ("lr_policy", "lr_value", "lr_predictor"):
            _require(values[name] > 0, name, "> 0", values[name])


@dataclass
class RNDSettings(ConfigGroup):
    """Random Network Distillation: the intrinsic reward and its normalisation."""

    # --- algorithm: RND intrinsic reward ---------------------------------------------------
    intrinsic: bool = True
    """Add RND's intrinsic reward; off: plain PPO (what `demostudio train ppo` runs)."""
    update_proportion: float = 0.25
    """Share of each minibatch the RND predictor is trained on."""
    obs_norm_init_steps: int = 128
    """Random-policy steps per environment that initialise the observation normalisation
    before training (the Chainer RND-PPO's 8 trials)."""
    obs_norm_clip: float = 5.0
    """Normalised observations are clipped to [-x, x]."""
    rnd_embed_dim: int = 512
    """Output width of the RND target and predictor."""
    rnd_hidden: int = 256
    """Width of the predictor's extra layers (and of the MLP for vector observations)."""
    rnd_leaf: str = ""
    """Observation leaf the RND networks see for Dict observations (e.g. image); empty:
    the only image leaf, else the only leaf."""
    rnd_full_grid: bool = False
    """MiniGrid: the RND networks read the whole grid (every cell, and the agent's cell
    with its direction) instead of the policy's egocentric view, which the policy still
    sees alone. Off: RND reads what the policy reads, as in the Chainer RND-PPO."""

    limits: ClassVar[dict[str, float]] = {
        "rnd_embed_dim": 8192,
        "rnd_hidden": 8192,
        "obs_norm_init_steps": 100_000,
    }

    def check(self) -> None:
        """Raise ValueError naming the flag for values that cannot work."""
        _require(
            0.0 < self.update_proportion <= 1.0,
            "update_proportion",
            "in (0, 1]",
            self.update_proportion,
        )
        _require(
            self.obs_norm_init_steps >= 0, "obs_norm_init_steps", ">= 0", self.obs_norm_init_steps
        )
        _require(self.obs_norm_clip > 0, "obs_norm_clip", "> 0", self.obs_norm_clip)
        for name, width in (("rnd_embed_dim", self.rnd_embed_dim), ("rnd_hidden", self.rnd_hidden)):
            _require(width >= 1, name, ">= 1", width)
        _require(
            not (self.rnd_full_grid and self.rnd_leaf and self.rnd_leaf != FULL_GRID),
            "rnd_leaf",
            f"empty or {FULL_GRID} with --rnd-full-grid",
            self.rnd_leaf,
        )


@dataclass
class AtariSettings(ConfigGroup):
    """Atari (ALE) environment settings of the RND paper (sticky actions: any env)."""

    # --- env: Atari (ALE) and sticky actions -----------------------------------------------
    frame_resize: int = 84
    """Frames are turned grey and resized to x by x pixels."""
    frame_stack: int = 4
    """Last frames stacked together as the policy's and values' input."""
    rnd_frame_stack: int = 1
    """Last frames stacked together as the RND networks' input (<= --frame-stack)."""
    sticky_action_probability: float | None = None
    """Repeat the previous action with this probability: ALE envs per emulator frame (none:
    0.25, the paper's), other envs per step through a wrapper (none: never)."""
    frame_skip: int = 4
    """Emulator frames per agent step (ALE)."""
    max_episode_frames: int = 18_000
    """Emulator frames after which an ALE episode is truncated (0 = no limit)."""

    # a stack deeper than 16 is not read as stacked frames (preprocess.is_frame_stack)
    limits: ClassVar[dict[str, float]] = {"frame_resize": 512, "frame_stack": 16, "frame_skip": 64}

    def check(self) -> None:
        """Raise ValueError naming the flag for values that cannot work."""
        _require(self.frame_resize >= 32, "frame_resize", ">= 32", self.frame_resize)
        _require(self.frame_stack >= 1, "frame_stack", ">= 1", self.frame_stack)
        _require(
            1 <= self.rnd_frame_stack <= self.frame_stack,
            "rnd_frame_stack",
            f"in [1, --frame-stack ({self.frame_stack})]",
            self.rnd_frame_stack,
        )
        p = self.sticky_action_probability
        _require(p is None or 0.0 <= p < 1.0, "sticky_action_probability", "in [0, 1)", p)
        _require(self.frame_skip >= 1, "frame_skip", ">= 1", self.frame_skip)
        _require(
            self.max_episode_frames >= 0, "max_episode_frames", ">= 0", self.max_episode_frames
        )

    ATARI_ONLY: ClassVar[tuple[str, ...]] = (
        "frame_resize",
        "frame_stack",
        "rnd_frame_stack",
        "frame_skip",
        "max_episode_frames",
    )
    """The fields read only for ALE envs (--sticky-action-probability applies to any env)."""

    def advice(self) -> list[str]:
        env = self.env if isinstance(self, RunConfig) else None
        if not env or is_ale(env):
            return []
        defaults = {f.name: f.default for f in dataclasses.fields(AtariSettings)}
        values = vars(self)
        given = [_flag(n) for n in self.ATARI_ONLY if values[n] != defaults[n]]
        if not given:
            return []
        return [f"{', '.join(given)}: Atari (ALE) settings, no effect on {env}"]


@dataclass
class DemoPretrainSettings(ConfigGroup):
    """Demos start the explorer off: behaviour cloning before the first rollout and,
    optionally, a BC loss on demo segments whose weight anneals to zero."""

    # --- demos: behaviour-cloning start ----------------------------------------------------
    bc_pretrain_updates: int = 500
    """Behaviour-cloning updates on the demos before the first rollout (with --demos)."""
    bc_batch_size: int = 16
    """Demo segments per behaviour-cloning update (pre-training and the annealed loss)."""
    bc_coef: float = 0.0
    """Weight of a BC loss on demo segments added to every PPO update, annealed linearly to
    0 over --bc-anneal-steps (0 = off, the default)."""
    bc_anneal_steps: int = 100_000
    """Env steps over which --bc-coef anneals to 0."""

    limits: ClassVar[dict[str, float]] = {"bc_batch_size": 4096, "bc_pretrain_updates": 100_000_000}
    diverging: ClassVar[tuple[str, ...]] = ("bc_coef",)

    def check(self) -> None:
        require(self, ("bc_pretrain_updates", "bc_coef", "bc_anneal_steps"), 0)
        require(self, ("bc_batch_size",), 1)


__all__ = ["AtariSettings", "DemoPretrainSettings", "PPOSettings", "RNDSettings", "is_ale"]

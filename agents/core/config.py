"""The shared training config: every field is a ``demostudio train ALGO`` flag."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal


@dataclass
class CoreConfig:
    """Recurrent replay training (actors + prioritized sequence replay + recurrent learner)."""

    # --- environment and run ---------------------------------------------------------------
    env: str = "CartPole-v1"
    """Gymnasium env id to train on."""
    env_kwargs: str = "{}"
    """Extra gymnasium.make keyword arguments as JSON, e.g. '{"max_episode_steps": 500}'."""
    seed: int = 0
    """Seed for envs, replay sampling, exploration and network init."""
    device: Literal["auto", "cpu", "cuda"] = "auto"
    """Torch device for the learner and actors (auto: cuda when available)."""
    total_env_steps: int = 100_000
    """Stop after this many environment steps (all actors together)."""
    run_dir: Path | None = None
    """Output folder (metrics, TensorBoard, checkpoints); default runs/<algo>-<env>-s<seed>."""
    resume: bool = False
    """Continue from the last checkpoint in run_dir (with its replay if --save-replay was on);
    `demostudio train` reuses the run's saved config, changing only the flags given."""
    save_replay: bool = False
    """Save the agent replay (and episode memory) with every checkpoint, as
    checkpoints/replay.npz, so --resume continues with it; large for image observations."""
    checkpoint_every: int = 25_000
    """Save a checkpoint every this many env steps (and always at the end)."""
    keep_checkpoints: int = 3
    """How many periodic checkpoints to keep (the final one is always kept)."""
    eval_every: int = 5_000
    """Evaluate the greedy policy every this many env steps (0 disables)."""
    eval_episodes: int = 5
    """Episodes per evaluation."""
    eval_epsilon: float = 0.0
    """Exploration epsilon during evaluation."""
    stop_return: float | None = None
    """Stop early once an evaluation's mean return reaches this."""
    progress: bool = True
    """Show a progress bar."""
    tensorboard: bool = True
    """Write TensorBoard scalars to run_dir/tb."""
    torch_threads: int = 1
    """torch.set_num_threads for training (small nets are fastest single-threaded)."""

    # --- actors ----------------------------------------------------------------------------
    num_actors: int = 4
    """Vectorized environments stepped together, each with its own epsilon."""
    epsilon_base: float = 0.4
    """Ape-X ladder: actor i explores with epsilon_base ** (1 + epsilon_alpha * i / (N - 1))."""
    epsilon_alpha: float = 7.0
    """Ape-X ladder exponent spread."""

    # --- network ---------------------------------------------------------------------------
    hidden: int = 64
    """Width of the encoder and head layers."""
    lstm: int = 64
    """LSTM state size (the core layer's width when not recurrent)."""
    recurrent: bool = True
    """LSTM core fed the previous action and reward; off: a feed-forward Q network."""

    # --- sequences -------------------------------------------------------------------------
    burn_in: int = 10
    """Steps at the start of each sequence used only to refresh the stored LSTM state."""
    trace: int = 20
    """Steps of each sequence that are learned from (sequence = burn_in + trace + 1)."""
    period: int = 10
    """A new sequence starts every this many steps (overlap = length - period)."""
    end_behavior: Literal["zero_pad", "align_end"] = "zero_pad"
    """Sequences at an episode end: zero-padded, or moved back to end on the last step."""

    # --- replay ----------------------------------------------------------------------------
    replay_capacity: int = 10_000
    """Agent replay size in sequences."""
    min_replay: int = 64
    """Sequences in the agent replay before learning starts."""
    batch_size: int = 32
    """Sequences per learner update."""
    env_steps_per_update: float = 4.0
    """Replay ratio: one learner update per this many env steps (all actors together)."""
    priority_alpha: float = 0.6
    """Priority exponent alpha (0 = uniform sampling)."""
    priority_beta: float = 0.6
    """Importance-weight exponent beta."""
    priority_eta: float = 0.9
    """Sequence priority = eta * max|delta| + (1 - eta) * mean|delta|."""

    # --- learning --------------------------------------------------------------------------
    discount: float = 0.99
    """Discount factor gamma."""
    n_step: int = 5
    """n of the n-step double-Q targets."""
    value_rescaling: bool = True
    """Use h(x) = sign(x)(sqrt(|x|+1)-1) + eps*x on targets (R2D2)."""
    rescale_eps: float = 1e-3
    """eps of the value rescaling h."""
    learning_rate: float = 1e-3
    """Adam learning rate."""
    adam_eps: float = 1e-3
    """Adam epsilon."""
    max_grad_norm: float = 10.0
    """Gradient norm clip."""
    target_update_every: int = 500
    """Copy the online network to the target network every this many updates."""

    @property
    def sequence_length(self) -> int:
        return self.burn_in + self.trace + 1

    def validate(self) -> None:
        """Raise ValueError naming the field for values that cannot work."""
        positive = [
            "total_env_steps",
            "num_actors",
            "hidden",
            "lstm",
            "trace",
            "period",
            "replay_capacity",
            "batch_size",
            "n_step",
            "target_update_every",
            "eval_episodes",
        ]
        for name in positive:
            if getattr(self, name) < 1:
                raise ValueError(
                    f"--{name.replace('_', '-')}: expected >= 1, got {getattr(self, name)}"
                )
        if self.period > self.trace:
            raise ValueError(
                f"--period: expected <= --trace ({self.trace}) so that every step is learned "
                f"from, got {self.period}"
            )
        if self.burn_in < 0:
            raise ValueError(f"--burn-in: expected >= 0, got {self.burn_in}")
        if self.env_steps_per_update <= 0:
            raise ValueError(
                f"--env-steps-per-update: expected > 0, got {self.env_steps_per_update}"
            )
        if not 0.0 <= self.priority_eta <= 1.0:
            raise ValueError(f"--priority-eta: expected in [0, 1], got {self.priority_eta}")
        if not 0.0 < self.discount <= 1.0:
            raise ValueError(f"--discount: expected in (0, 1], got {self.discount}")
        kwargs = self.make_kwargs()
        if not isinstance(kwargs, dict):
            raise ValueError(f"--env-kwargs: expected a JSON object, got {self.env_kwargs!r}")

    def make_kwargs(self) -> dict[str, Any]:
        try:
            return json.loads(self.env_kwargs or "{}")
        except json.JSONDecodeError as exc:
            raise ValueError(
                f"--env-kwargs: expected JSON, got {self.env_kwargs!r} ({exc})"
            ) from None


def config_to_dict(cfg: CoreConfig) -> dict[str, Any]:
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


__all__ = ["CoreConfig", "config_to_dict"]

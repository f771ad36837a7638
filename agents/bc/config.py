"""Behaviour cloning's config: demos, validation split, network, sequences, optimisation
and evaluation. Every field is a ``demostudio train bc`` flag."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agents.core.config import CoreConfig


@dataclass
class BCConfig:
    """Behaviour cloning: cross-entropy on the demonstrator's actions, early-stopped on a
    validation split of the demo episodes; the policy is evaluated in the env."""

    # --- environment and run ---------------------------------------------------------------
    env: str = "CartPole-v1"
    """Gymnasium env id the demos come from and the policy is evaluated on."""
    env_kwargs: str = "{}"
    """Extra gymnasium.make keyword arguments as JSON, e.g. '{"max_episode_steps": 500}'."""
    seed: int = 0
    """Seed for the split, batch order, network init and evaluation episodes."""
    device: Literal["auto", "cpu", "cuda"] = "auto"
    """Torch device (auto: cuda when available)."""
    run_dir: Path | None = None
    """Output folder (metrics, TensorBoard, checkpoints); default runs/bc-<env>-s<seed>."""
    progress: bool = True
    """Show a progress bar."""
    tensorboard: bool = True
    """Write TensorBoard scalars to run_dir/tb (x axis: updates)."""
    torch_threads: int = 1
    """torch.set_num_threads for training."""

    # --- demonstrations --------------------------------------------------------------------
    demos: tuple[Path, ...] = ()
    """Demo episode files or folders (searched recursively for *.h5)."""
    demo_env_override: str | None = None
    """Accept demos recorded on this env id instead of --env (spaces must still match)."""
    val_fraction: float = 0.2
    """Share of the demo EPISODES held out for validation (>= 1 episode when there are 2+)."""

    # --- network ---------------------------------------------------------------------------
    recurrent: bool = False
    """LSTM policy trained on sequences with burn-in; off (default): feed-forward."""
    hidden: int = 64
    """Width of the encoder and head layers."""
    lstm: int = 64
    """LSTM state size (the core layer's width when not recurrent)."""

    # --- sequences -------------------------------------------------------------------------
    burn_in: int = 0
    """Steps at the start of each sequence that only warm up the LSTM state (recurrent)."""
    trace: int = 20
    """Steps of each sequence that are learned from."""
    period: int = 20
    """A new sequence starts every this many steps."""
    end_behavior: Literal["zero_pad", "align_end"] = "zero_pad"
    """Sequences at an episode end: zero-padded, or moved back to end on the last step."""
    state_refresh_every: int = 500
    """Recurrent: recompute the stored LSTM states of the demo sequences with the current
    network every this many updates (0: keep the initial network's states)."""

    # --- optimisation ----------------------------------------------------------------------
    batch_size: int = 32
    """Sequences per update."""
    learning_rate: float = 1e-3
    """Adam learning rate."""
    max_grad_norm: float = 10.0
    """Gradient norm clip."""
    max_updates: int = 5_000
    """Stop after this many updates at the latest."""
    val_every: int = 50
    """Measure the validation loss every this many updates."""
    patience: int = 10
    """Stop after this many validations without improvement (0: never stop early)."""
    min_delta: float = 1e-4
    """A validation loss must drop by more than this to count as an improvement."""

    # --- evaluation ------------------------------------------------------------------------
    eval_every: int = 1_000
    """Evaluate the policy in the env every this many updates (0: only at the end)."""
    eval_episodes: int = 5
    """Episodes per evaluation."""
    eval_epsilon: float = 0.0
    """Exploration epsilon during evaluation."""

    @property
    def sequence_length(self) -> int:
        return self.burn_in + self.trace + 1

    def validate(self) -> None:
        """Raise ValueError naming the field for values that cannot work."""
        if not self.demos:
            raise ValueError("--demos: expected at least one demo file or folder, got none")
        for name in ("hidden", "lstm", "trace", "period", "batch_size", "max_updates",
                     "val_every", "eval_episodes"):  # fmt: skip
            if getattr(self, name) < 1:
                raise ValueError(
                    f"--{name.replace('_', '-')}: expected >= 1, got {getattr(self, name)}"
                )
        for name in ("burn_in", "patience", "eval_every", "state_refresh_every"):
            if getattr(self, name) < 0:
                raise ValueError(
                    f"--{name.replace('_', '-')}: expected >= 0, got {getattr(self, name)}"
                )
        if not 0.0 <= self.val_fraction < 1.0:
            raise ValueError(f"--val-fraction: expected in [0, 1), got {self.val_fraction}")
        if self.burn_in and not self.recurrent:
            raise ValueError(
                f"--burn-in: expected 0 for a feed-forward policy (or pass --recurrent), "
                f"got {self.burn_in}"
            )
        if not isinstance(self.make_kwargs(), dict):
            raise ValueError(f"--env-kwargs: expected a JSON object, got {self.env_kwargs!r}")

    def make_kwargs(self) -> dict[str, Any]:
        return CoreConfig(env_kwargs=self.env_kwargs).make_kwargs()


__all__ = ["BCConfig"]

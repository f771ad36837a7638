"""The network's config groups: its widths and the recurrent torso."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from agents.core.config.base import ConfigGroup, require


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

"""Recurrent Q network: encoder chosen from the observation spec, an LSTM core fed the
previous action (one-hot) and reward, and a dueling head.

All sequence tensors are time-major: ``[T, B, ...]``. The LSTM runs as ONE ``nn.LSTM`` call
over the whole sequence: sequences never cross an episode (see :mod:`agents.core.sequences`),
so an episode end only appears as masked zero padding at the tail and needs no reset inside
the sequence.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import nn

from agents.core.preprocess import Leaf, ObsSpec

GRID_VALUES = (16, 8, 4)
"""One-hot sizes of MiniGrid's (object, colour, state) channels (11, 6 and 3 used)."""


class LSTMState(NamedTuple):
    """Recurrent state, each ``[B, H]``."""

    h: torch.Tensor
    c: torch.Tensor


class NetworkOutput(NamedTuple):
    q: torch.Tensor
    """``[T, B, A]`` action values."""
    state: LSTMState
    """State after the last step."""


def _mlp(n_in: int, hidden: int) -> nn.Module:
    return nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())


class FrameEncoder(nn.Module):
    """Nature-DQN CNN for ``[N, 84, 84]`` uint8 gray frames."""

    def __init__(self, hidden: int):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(1, 32, 8, stride=4),
            nn.ReLU(),
            nn.Conv2d(32, 64, 4, stride=2),
            nn.ReLU(),
            nn.Conv2d(64, 64, 3, stride=1),
            nn.ReLU(),
            nn.Flatten(),
            nn.Linear(64 * 7 * 7, hidden),
            nn.ReLU(),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x.float().unsqueeze(1) / 255.0)


class GridEncoder(nn.Module):
    """MiniGrid symbolic view ``[N, H, W, 3]``: one-hot per channel, then a small CNN."""

    def __init__(self, leaf: Leaf, hidden: int):
        super().__init__()
        h, w, c = leaf.shape
        self.sizes = GRID_VALUES[:c] if c <= len(GRID_VALUES) else (16,) * c
        self.offsets = torch.tensor([sum(self.sizes[:i]) for i in range(c)], dtype=torch.long)
        channels = sum(self.sizes)
        self.conv = nn.Sequential(
            nn.Conv2d(channels, 16, 2),
            nn.ReLU(),
            nn.Conv2d(16, 32, 2),
            nn.ReLU(),
            nn.Flatten(),
        )
        self.out = nn.Sequential(nn.Linear(32 * max(h - 2, 1) * max(w - 2, 1), hidden), nn.ReLU())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        sizes = torch.tensor(self.sizes, device=x.device)
        idx = torch.minimum(x.long().clamp(min=0), sizes - 1) + self.offsets.to(x.device)
        onehot = torch.zeros(*x.shape[:3], sum(self.sizes), device=x.device)
        onehot.scatter_(-1, idx, 1.0)
        return self.out(self.conv(onehot.permute(0, 3, 1, 2)))


class DiscreteEncoder(nn.Module):
    def __init__(self, n: int):
        super().__init__()
        self.n = n

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.one_hot(x.long().clamp(0, self.n - 1), self.n).float()


def _encoder(leaf: Leaf, hidden: int) -> tuple[nn.Module, int]:
    if leaf.kind == "frame":
        return FrameEncoder(hidden), hidden
    if leaf.kind == "grid":
        return GridEncoder(leaf, hidden), hidden
    if leaf.kind == "discrete":
        return DiscreteEncoder(leaf.n), leaf.n
    return _mlp(leaf.shape[0], hidden), hidden


class ObservationEncoder(nn.Module):
    """One encoder per leaf, concatenated (Dict spaces combined)."""

    def __init__(self, spec: ObsSpec, hidden: int):
        super().__init__()
        parts = {name: _encoder(leaf, hidden) for name, leaf in spec.items()}
        self.encoders = nn.ModuleDict({k: m for k, (m, _) in parts.items()})
        self.out_dim = sum(d for _, d in parts.values())

    def forward(self, obs: dict[str, torch.Tensor]) -> torch.Tensor:
        """``obs[leaf]`` is ``[N, ...]``; returns ``[N, out_dim]``."""
        return torch.cat([enc(obs[k]) for k, enc in self.encoders.items()], dim=-1)


class RecurrentQNetwork(nn.Module):
    """Encoder -> LSTM(features, one-hot previous action, previous reward) -> dueling head.

    With ``recurrent=False`` the LSTM is replaced by a Linear+ReLU layer on the features
    only: every step is valued on its own observation (a feed-forward Q network with the
    same interface; the state is passed through untouched)."""

    def __init__(
        self,
        spec: ObsSpec,
        num_actions: int,
        hidden: int = 64,
        lstm: int = 64,
        recurrent: bool = True,
    ):
        super().__init__()
        self.num_actions = num_actions
        self.lstm_size = lstm
        self.recurrent = recurrent
        self.encoder = ObservationEncoder(spec, hidden)
        if recurrent:
            self.core = nn.LSTM(self.encoder.out_dim + num_actions + 1, lstm)
        else:  # feed-forward: Q(s) from the observation alone (DQN-style MLP core)
            self.core = nn.Sequential(nn.Linear(self.encoder.out_dim, lstm), nn.ReLU())
        self.value = nn.Sequential(nn.Linear(lstm, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.advantage = nn.Sequential(
            nn.Linear(lstm, hidden), nn.ReLU(), nn.Linear(hidden, num_actions)
        )

    def initial_state(self, batch: int, device: torch.device | str = "cpu") -> LSTMState:
        z = torch.zeros(batch, self.lstm_size, device=device)
        return LSTMState(z, z.clone())

    def forward(
        self,
        obs: dict[str, torch.Tensor],
        prev_action: torch.Tensor,
        prev_reward: torch.Tensor,
        state: LSTMState,
    ) -> NetworkOutput:
        """``obs[leaf]``: ``[T, B, ...]``; ``prev_action``: ``[T, B]`` long (-1 = none);
        ``prev_reward``: ``[T, B]``; ``state``: each ``[B, H]``."""
        t, b = prev_action.shape
        flat = {k: v.reshape(t * b, *v.shape[2:]) for k, v in obs.items()}
        features = self.encoder(flat).reshape(t, b, -1)
        if not self.recurrent:  # previous action/reward unused; the state passes through
            return NetworkOutput(self._head(self.core(features)), state)
        # -1 (no previous action, start of episode) maps to an all-zero one-hot.
        a = nn.functional.one_hot(prev_action.long() + 1, self.num_actions + 1)[..., 1:]
        x = torch.cat([features, a.float(), prev_reward.float().unsqueeze(-1)], dim=-1)
        out, (h, c) = self.core(x, (state.h.unsqueeze(0), state.c.unsqueeze(0)))
        return NetworkOutput(self._head(out), LSTMState(h[0], c[0]))

    def _head(self, out: torch.Tensor) -> torch.Tensor:
        adv = self.advantage(out)
        return self.value(out) + adv - adv.mean(dim=-1, keepdim=True)


__all__ = ["LSTMState", "NetworkOutput", "ObservationEncoder", "RecurrentQNetwork"]

"""Output heads of a :class:`~agents.core.networks.RecurrentNetwork`, each reading the
core's features ``[T, B, F]``:

=================== ============================ =========================================
kind                output                       used by
=================== ============================ =========================================
``dueling_q``       ``[T, B, A]`` action values  R2D2, R2D3, DQfD, SQIL
``logits``          ``[T, B, A]`` policy logits  BC, Reactor's policy, PPO's policy
``distributional_q``  ``[T, B, A, atoms]`` logits  Reactor's critic (C51 atoms)
``value``           ``[T, B]`` a state value     PPO (one head per value: ext, int)
=================== ============================ =========================================

Each is a Linear-ReLU-Linear stack run through :func:`~agents.core.encoders.run_stack`
(no module call per layer); :func:`numpy_head` is its numpy form for acting.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
from torch import nn

from agents.core.encoders import run_stack
from agents.core.numpy_step import HeadFn, dueling_head, linear_layers, plain_head

HeadKind = Literal["dueling_q", "logits", "distributional_q", "value"]


@dataclass(frozen=True)
class HeadSpec:
    kind: HeadKind
    atoms: int = 0
    """Number of atoms (``distributional_q`` only)."""


class DuelingQ(nn.Module):
    """V(s) + A(s, a) - mean_a A(s, a)."""

    def __init__(self, n_in: int, hidden: int, num_actions: int, spec: HeadSpec):
        super().__init__()
        self.value = nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.advantage = nn.Sequential(
            nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, num_actions)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        adv = run_stack(self.advantage, x)
        return run_stack(self.value, x) + adv - adv.mean(dim=-1, keepdim=True)


class PolicyLogits(nn.Module):
    def __init__(self, n_in: int, hidden: int, num_actions: int, spec: HeadSpec):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, num_actions))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return run_stack(self.net, x)


class DistributionalQ(nn.Module):
    """Logits over ``atoms`` return atoms per action (C51); softmax over the last dim."""

    def __init__(self, n_in: int, hidden: int, num_actions: int, spec: HeadSpec):
        super().__init__()
        if spec.atoms < 2:
            raise ValueError(f"distributional_q: expected atoms >= 2, got {spec.atoms}")
        self.shape = (num_actions, spec.atoms)
        self.net = nn.Sequential(
            nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, num_actions * spec.atoms)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return run_stack(self.net, x).reshape(*x.shape[:-1], *self.shape)


class Value(nn.Module):
    def __init__(self, n_in: int, hidden: int, num_actions: int, spec: HeadSpec):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return run_stack(self.net, x).squeeze(-1)


HEADS: dict[str, type[nn.Module]] = {
    "dueling_q": DuelingQ,
    "logits": PolicyLogits,
    "distributional_q": DistributionalQ,
    "value": Value,
}
ACTION_AXIS: dict[str, int | None] = {
    "dueling_q": -1, "logits": -1, "distributional_q": -2, "value": None,
}  # fmt: skip
"""The axis of each head kind's output that runs over actions (None: no such axis)."""


def numpy_head(head: nn.Module, spec: HeadSpec) -> HeadFn | None:
    """A head's numpy form (None: not covered)."""
    if spec.kind == "dueling_q":
        value, advantage = linear_layers(head.value), linear_layers(head.advantage)
        return None if value is None or advantage is None else dueling_head(value, advantage)
    layers = linear_layers(head.net)
    shape = {"value": (), "distributional_q": getattr(head, "shape", ())}.get(spec.kind, (-1,))
    return None if layers is None else plain_head(layers, shape)


__all__ = [
    "ACTION_AXIS",
    "HEADS",
    "DistributionalQ",
    "DuelingQ",
    "HeadKind",
    "HeadSpec",
    "PolicyLogits",
    "Value",
    "numpy_head",
]

"""Target networks: a frozen copy of a trained network that follows it by a rule.

* :class:`HardCopy` ``(every=K)``: copied over every K learner updates (R2D2, DQfD).
* :class:`Polyak` ``(tau)``: after every update ``target <- (1 - tau) target + tau online``
  (Reactor's average policy network for its trust region).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class HardCopy:
    every: int
    """Copy every this many updates."""

    def update(self, target: torch.nn.Module, online: torch.nn.Module, updates: int) -> None:
        if updates % self.every == 0:
            target.load_state_dict(online.state_dict())


@dataclass(frozen=True)
class Polyak:
    tau: float
    """Share of the online weights blended in per update (0 < tau <= 1)."""

    def __post_init__(self) -> None:
        if not 0.0 < self.tau <= 1.0:
            raise ValueError(f"Polyak: expected 0 < tau <= 1, got {self.tau}")

    @torch.no_grad()
    def update(self, target: torch.nn.Module, online: torch.nn.Module, updates: int) -> None:
        for t, o in zip(target.parameters(), online.parameters()):
            t.lerp_(o, self.tau)
        for t, o in zip(target.buffers(), online.buffers()):
            t.copy_(o)


TargetRule = HardCopy | Polyak


def make_target(online: torch.nn.Module) -> torch.nn.Module:
    """A frozen copy of ``online``. A deep copy leaves an LSTM's weights as separate tensors,
    which cuDNN would copy into one block on every call (with a warning); they are put back
    into one block here (a no-op off CUDA)."""
    target = copy.deepcopy(online).requires_grad_(False)
    for module in target.modules():
        if isinstance(module, torch.nn.RNNBase):
            module.flatten_parameters()
    return target


__all__ = ["HardCopy", "Polyak", "TargetRule", "make_target"]

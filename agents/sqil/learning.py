"""SQIL's loss: the core's n-step double-Q sequence loss on relabelled rewards (1 for every
real demo step, 0 for every agent step); environment rewards are never learned from."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from agents.core.losses import LossOutput, r2d2_loss

if TYPE_CHECKING:
    from agents.core.learner import Learner, TorchBatch

DEMO_SOURCE = 1
"""Batch source index of the demo replay (the first extra source of the mix)."""


def sqil_rewards(source: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``[T, B]`` rewards: 1 on the real steps of demo elements, 0 elsewhere.

    ``source``: ``[B]`` buffer of each element; ``mask``: ``[T, B]`` real steps."""
    demo = (source == DEMO_SOURCE).to(torch.float32)
    return mask.to(torch.float32) * demo.unsqueeze(0)


def sqil_loss(learner: Learner, batch: TorchBatch) -> LossOutput:
    out = r2d2_loss(learner, batch._replace(reward=sqil_rewards(batch.source, batch.mask)))
    demo = batch.source == DEMO_SOURCE
    return out._replace(metrics={**out.metrics, "sqil_demo_share": float(demo.float().mean())})


__all__ = ["DEMO_SOURCE", "sqil_loss", "sqil_rewards"]

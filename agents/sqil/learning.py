"""SQIL's loss: the core's n-step double-Q sequence loss on relabelled rewards (1 for every
real demo step, 0 for every agent step); environment rewards are never learned from."""

from __future__ import annotations

import torch

from agents.core.batch import LearnerView, LossOutput, TorchBatch
from agents.core.config import ReplayAgentConfig
from agents.r2d2.learning import r2d2_loss


def sqil_rewards(is_demo: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``[T, B]`` rewards: 1 on the real steps of demo elements, 0 elsewhere.

    ``is_demo``: ``[B]`` bool, the element came from a demo source; ``mask``: ``[T, B]``."""
    return mask.to(torch.float32) * is_demo.to(torch.float32).unsqueeze(0)


def sqil_loss(learner: LearnerView, batch: TorchBatch, cfg: ReplayAgentConfig) -> LossOutput:
    rewarded = batch._replace(reward=sqil_rewards(batch.is_demo, batch.mask))
    out = r2d2_loss(learner, rewarded, cfg)
    share = float(batch.is_demo.float().mean())
    return out._replace(metrics={**out.metrics, "sqil_demo_share": share})


__all__ = ["sqil_loss", "sqil_rewards"]

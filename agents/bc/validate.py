"""BC's validation: mean cross-entropy and accuracy over every learned step of the
held-out episodes' sequences, in chunks."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch

from agents.bc.learning import bc_loss
from agents.core.batch import to_torch, uniform_sample
from agents.core.sequences import SequenceBatch, take

if TYPE_CHECKING:
    from agents.core.context import RunContext

VAL_CHUNK = 256
"""Validation sequences per forward pass."""


@torch.no_grad()
def validation_loss(ctx: RunContext, seqs: SequenceBatch, burn_in: int) -> tuple[float, float]:
    total, correct, steps = 0.0, 0.0, 0.0
    for lo in range(0, len(seqs), VAL_CHUNK):
        idx = np.arange(lo, min(lo + VAL_CHUNK, len(seqs)))
        tb = to_torch(uniform_sample(take(seqs, idx), idx), ctx.device)
        out = bc_loss(ctx.network, tb, burn_in)
        total += float(out.loss) * float(out.steps)
        correct += float(out.correct)
        steps += float(out.steps)
    return total / max(steps, 1.0), correct / max(steps, 1.0)


__all__ = ["VAL_CHUNK", "validation_loss"]

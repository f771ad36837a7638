"""DQfD's loss: 1-step double Q + lambda1 n-step double Q + lambda2 large-margin
classification on demo transitions + lambda3 L2, and the demo/agent priority bonuses.

Tensors are time-major ``[T, B]`` (``[T, B, A]`` for action values), as in the core.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from agents.core.batch import LearnerView, LossOutput, SourceSizes, TorchBatch
from agents.core.losses import large_margin_loss, learn_mask, n_step_targets, q_values

if TYPE_CHECKING:
    from agents.dqfd.config import DQfDConfig


def l2_penalty(module: torch.nn.Module) -> torch.Tensor:
    """Sum of squares of every trainable parameter (weights and biases)."""
    return sum((p**2).sum() for p in module.parameters() if p.requires_grad)


def global_weights(weight: torch.Tensor, source: torch.Tensor, held: SourceSizes) -> torch.Tensor:
    """Importance weights as if all sources (what each ``held`` when the batch was drawn)
    were ONE prioritized replay.

    Each buffer weights its items by ``(N_b P_b(i))^-beta`` with its own size and total;
    sampling buffer ``b`` with probability ``T_b / T`` (its share of the summed priorities)
    makes ``P(i) = p_i / T`` overall, whose weight differs from the buffer's by the constant
    ``(N T_b / (N_b T))^-beta``. ``weight``/``source``: ``[B]``; -> ``[B]`` normalised by
    the batch maximum.
    """
    sizes = torch.as_tensor(held.size, dtype=torch.float64)
    totals = torch.as_tensor(held.total, dtype=torch.float64)
    betas = torch.as_tensor(held.beta, dtype=torch.float64)
    filled = (sizes > 0) & (totals > 0)  # an empty buffer provides no element to weight
    ratio = torch.where(
        filled, sizes.sum() * totals / (sizes.clamp(min=1) * totals.sum().clamp(min=1e-12)), 1.0
    )
    factor = (ratio ** (-betas)).to(weight.device, weight.dtype)
    w = weight * factor[source.long()]
    return w / w.max()


class DQfDLoss:
    """The DQfD loss as a core loss (``loss(learner, batch)``).

    The margin loss and the demo priority bonus apply to ``batch.is_demo`` elements; a
    batch drawn from the data sources (``batch.held``) has its per-buffer importance weights
    turned into those of one shared prioritized replay.
    """

    def __init__(self, cfg: DQfDConfig):
        self.cfg = cfg

    def __call__(self, learner: LearnerView, batch: TorchBatch) -> LossOutput:
        cfg = self.cfg
        q_online, q_target = q_values(learner, batch, cfg.burn_in)
        greedy = q_online.argmax(dim=-1, keepdim=True)
        bootstrap = q_target.gather(-1, greedy).squeeze(-1)
        eps = cfg.rescale_eps if cfg.value_rescaling else None
        q_taken = q_online.gather(-1, batch.action.unsqueeze(-1)).squeeze(-1)
        learn = learn_mask(batch, cfg.burn_in)
        m = learn.float()

        def td(n: int) -> torch.Tensor:
            target = n_step_targets(
                batch.reward, batch.terminal, batch.mask, bootstrap, cfg.discount, n, eps
            )
            return (target.detach() - q_taken) * m

        td_1, td_n = td(1), td(cfg.n_step)
        demo = batch.is_demo
        margin = large_margin_loss(q_online, batch.action, cfg.margin) * m * demo.float()
        per_step = 0.5 * td_1**2 + cfg.lambda_n_step * 0.5 * td_n**2 + cfg.lambda_margin * margin
        per_seq = per_step.sum(0) / learn.sum(0).clamp(min=1)
        weight = batch.weight
        if batch.held is not None:
            weight = global_weights(weight, batch.source, batch.held)
        l2 = l2_penalty(learner.network)
        loss = (per_seq * weight).mean() + cfg.lambda_l2 * l2
        bonus = torch.where(demo, cfg.demo_priority_bonus, cfg.agent_priority_bonus)
        td_abs = (td_1.detach().abs() + bonus.to(td_1.dtype)) * m
        n_demo = (m * demo.float()).sum().clamp(min=1)
        return LossOutput(
            loss=loss,
            td_abs=td_abs,
            learn_mask=learn,
            metrics={
                "loss": float(loss.detach()),
                "loss_1step": float((0.5 * td_1**2).sum().detach() / m.sum().clamp(min=1)),
                "loss_nstep": float((0.5 * td_n**2).sum().detach() / m.sum().clamp(min=1)),
                "loss_margin": float(margin.sum().detach() / n_demo),
                "loss_l2": float(l2.detach()),
                "q_mean": float(q_taken[learn].mean().detach()),
            },
        )


__all__ = ["DQfDLoss", "global_weights", "l2_penalty", "large_margin_loss"]

"""R2D2's loss: n-step double Q-learning with value rescaling over each sequence's trace
(after the burn-in), priorities from the |TD| errors. R2D3 adds DQfD's large-margin term on
demo steps through ``margin_weight``; SQIL relabels the rewards first.

Tensors are time-major ``[T, B]`` (``[T, B, A]`` for action values).
"""

from __future__ import annotations

from agents.core.batch import LearnerView, LossOutput, TorchBatch
from agents.core.config import ReplayAgentConfig
from agents.core.losses import large_margin_loss, learn_mask, n_step_targets, q_values


def r2d2_loss(
    learner: LearnerView,
    batch: TorchBatch,
    cfg: ReplayAgentConfig,
    margin_weight: float = 0.0,
    margin: float = 0.8,
) -> LossOutput:
    """n-step double Q-learning with value rescaling over the trace (after burn-in); with
    ``margin_weight`` > 0, plus that times DQfD's :func:`large_margin_loss` on the learned
    steps of demo elements (``batch.is_demo``; priorities stay the TD errors)."""
    q_online, q_target = q_values(learner, batch, cfg.burn_in)
    greedy = q_online.argmax(dim=-1, keepdim=True)
    bootstrap = q_target.gather(-1, greedy).squeeze(-1)
    eps = cfg.rescale_eps if cfg.value_rescaling else None
    target = n_step_targets(
        batch.reward, batch.terminal, batch.mask, bootstrap, cfg.discount, cfg.n_step, eps
    )
    q_taken = q_online.gather(-1, batch.action.unsqueeze(-1)).squeeze(-1)
    learn = learn_mask(batch, cfg.burn_in)
    td = (target.detach() - q_taken) * learn
    per_step = 0.5 * td**2
    metrics = {}
    if margin_weight > 0:
        on_demo = learn & batch.is_demo.unsqueeze(0)
        gap = large_margin_loss(q_online, batch.action, margin) * on_demo
        per_step = per_step + margin_weight * gap
        metrics["loss_margin"] = float(gap.detach().sum() / on_demo.sum().clamp(min=1))
    per_seq = per_step.sum(0) / learn.sum(0).clamp(min=1)
    loss = (per_seq * batch.weight).mean()
    return LossOutput(
        loss=loss,
        td_abs=td.detach().abs(),
        learn_mask=learn,
        metrics={
            "loss": float(loss.detach()),
            "q_mean": float((q_taken.detach() * learn).sum() / learn.sum().clamp(min=1)),
            **metrics,
        },
    )


__all__ = ["r2d2_loss"]

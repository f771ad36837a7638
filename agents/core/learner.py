"""The learner: the trained networks, their target copies (each following its network by a
:mod:`~agents.core.targets` rule), one Adam optimiser over every trainable parameter,
gradient clipping, optional parameter groups (a learning rate per part), and a pluggable
loss that may return priorities.

The loss is called as ``loss(learner, batch)`` and reads ``learner.networks`` /
``learner.targets`` (:class:`agents.core.batch.LearnerView`); its own settings are bound by
the agent that makes it (``partial(loss, cfg=...)``), so no learner holds a config; losses import
:mod:`agents.core.batch`, never this module. A network whose parameters do not require
gradients (RND's fixed random target) is held and checkpointed but not trained.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple, Protocol

import numpy as np
import torch

from agents.core.adam import FusedAdam
from agents.core.batch import Loss, Sample, to_torch
from agents.core.targets import TargetRule, make_target


def diverged_message(hint: str, update: int, what: str, value: float) -> str:
    """One line for a non-finite loss, with the config's ``hint``
    (:meth:`~agents.core.config.ConfigGroup.divergence_hint`: the changed fields that can
    make the learner diverge, else the learning rate's flag)."""
    return f"training diverged: the {what} became {value} at update {update} ({hint})"


class OptimSource(Protocol):
    """A config the optimiser's settings are read from (OptimConfig's fields, or an
    algorithm's properties of the same names) with its hint for a diverged run."""

    learning_rate: float
    adam_eps: float
    adam_beta1: float
    max_grad_norm: float

    def divergence_hint(self) -> str: ...


class Optim(NamedTuple):
    """The learner's own settings: Adam's, the gradient clip and what a diverged run is
    told to check."""

    learning_rate: float
    adam_eps: float
    adam_beta1: float
    max_grad_norm: float
    """0: measure the norm, do not clip."""
    divergence_hint: str

    @classmethod
    def of(cls, cfg: OptimSource) -> Optim:
        return cls(float(cfg.learning_rate), float(cfg.adam_eps), float(cfg.adam_beta1),
                   float(cfg.max_grad_norm), cfg.divergence_hint())  # fmt: skip


def clip_grad_norm(grads: list[torch.Tensor], max_norm: float) -> torch.Tensor:
    """The gradients' total 2-norm, and the gradients scaled down to ``max_norm`` when it
    is above: the operations ``torch.nn.utils.clip_grad_norm_`` runs (so the same numbers),
    without its grouping by device and type (the learner's gradients share one) and
    without the multiply by one when nothing is clipped."""
    if not grads:
        return torch.zeros(())
    with torch.no_grad():
        total = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads, 2.0)), 2.0)
        if math.isfinite(max_norm):
            coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
            if float(coef) < 1.0:
                torch._foreach_mul_(grads, coef)
    return total


class Learner:
    def __init__(
        self,
        networks: Mapping[str, torch.nn.Module],
        device: torch.device,
        loss: Loss,
        targets: Mapping[str, TargetRule] | None = None,
        param_groups: list[dict[str, Any]] | None = None,
        *,
        optim: Optim,
    ):
        """``loss``: the algorithm's loss, with its settings bound (the learner reads only
        ``optim``). ``param_groups``: Adam parameter groups (``{"params": [...], "lr": x}``,
        separate learning rates per part, see ``Agent.param_groups``); default one group of
        every trainable parameter at ``optim.learning_rate``."""
        if "main" not in networks:
            raise ValueError(f"expected a network named 'main', got {sorted(networks)}")
        self.optim = optim
        self.device = device
        self.networks = {k: n.to(device) for k, n in networks.items()}
        self.rules = dict(targets or {})
        self.targets = {k: make_target(self.networks[k]) for k in self.rules}
        self.loss_fn = loss
        self.params = [p for n in self.networks.values() for p in n.parameters() if p.requires_grad]
        self.optimizer = FusedAdam(
            param_groups if param_groups is not None else [{"params": self.params}],
            lr=optim.learning_rate,
            betas=(optim.adam_beta1, 0.999),
            eps=optim.adam_eps,
        )
        self.updates = 0

    @property
    def network(self) -> torch.nn.Module:
        return self.networks["main"]

    @property
    def target(self) -> torch.nn.Module:
        return self.targets["main"]

    def update(
        self, sample: Sample
    ) -> tuple[dict[str, float], np.ndarray | None, np.ndarray | None]:
        """One gradient step; returns metrics and, when the loss gives them, ``[B, T]`` |TD|
        and the learned mask (numpy) for priorities."""
        batch = to_torch(sample, self.device)
        out = self.loss_fn(self, batch)
        self.optimizer.zero_grad(set_to_none=True)
        out.loss.backward()
        max_norm = self.optim.max_grad_norm or math.inf  # 0: measure, do not clip
        grad_norm = clip_grad_norm([p.grad for p in self.params if p.grad is not None], max_norm)
        loss_value, norm_value = float(out.loss.detach()), float(grad_norm)
        if not (math.isfinite(loss_value) and math.isfinite(norm_value)):
            # before the step: the weights stay as they were (finite)
            bad = loss_value if not math.isfinite(loss_value) else norm_value
            what = "loss" if not math.isfinite(loss_value) else "gradient norm"
            hint = self.optim.divergence_hint
            raise ValueError(diverged_message(hint, self.updates + 1, what, bad))
        self.optimizer.step()
        self.updates += 1
        for name, rule in self.rules.items():
            rule.update(self.targets[name], self.networks[name], self.updates)
        metrics = dict(out.metrics, grad_norm=float(grad_norm))
        if out.td_abs is None or out.learn_mask is None:
            return metrics, None, None
        return metrics, out.td_abs.T.cpu().numpy(), out.learn_mask.T.cpu().numpy()

    def state_dict(self) -> dict[str, Any]:
        return {
            "networks": {k: n.state_dict() for k, n in self.networks.items()},
            "targets": {k: t.state_dict() for k, t in self.targets.items()},
            "optimizer": self.optimizer.state_dict(),
            "updates": self.updates,
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        for k, n in self.networks.items():
            n.load_state_dict(state["networks"][k])
        for k, t in self.targets.items():
            t.load_state_dict(state["targets"][k])
        self.optimizer.load_state_dict(state["optimizer"])
        self.updates = int(state["updates"])


__all__ = ["Learner", "Optim", "diverged_message"]

"""Reactor (Gruslys et al. 2018): the agent (``demostudio train reactor``), its config, and the
learning math as pure torch functions, time-major."""

from agents.reactor.acting import demo_behaviour, demo_extras
from agents.reactor.agent import Reactor, train_reactor
from agents.reactor.config import ReactorConfig, ReactorLossConfig
from agents.reactor.distributional import (
    atoms,
    categorical_cross_entropy,
    distributional_retrace_targets,
    project_categorical,
    total_variation,
)
from agents.reactor.learning import reactor_learner_loss
from agents.reactor.loss import ReactorLossInputs, ReactorLossOutput, reactor_loss
from agents.reactor.policy_gradient import beta_loo_loss, entropy, loo_beta, tis_loss
from agents.reactor.retrace import cut_traces, retrace_targets, retrace_traces
from agents.reactor.trust_region import (
    TrustRegionLoss,
    kl_gradient_logits,
    polyak_update_,
    trust_region_loss,
    trust_region_project,
)

__all__ = [
    "Reactor",
    "ReactorConfig",
    "ReactorLossConfig",
    "ReactorLossInputs",
    "ReactorLossOutput",
    "TrustRegionLoss",
    "atoms",
    "beta_loo_loss",
    "categorical_cross_entropy",
    "cut_traces",
    "demo_behaviour",
    "demo_extras",
    "distributional_retrace_targets",
    "entropy",
    "kl_gradient_logits",
    "loo_beta",
    "polyak_update_",
    "project_categorical",
    "reactor_learner_loss",
    "reactor_loss",
    "retrace_targets",
    "retrace_traces",
    "tis_loss",
    "total_variation",
    "train_reactor",
    "trust_region_loss",
    "trust_region_project",
]

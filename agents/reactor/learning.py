"""The Reactor's learner loss: unroll the networks over a replayed batch and hand the learned
part to :func:`agents.reactor.loss.reactor_loss`.

``main`` is unrolled from the stored LSTM state with the burn-in (no gradient there); its
Polyak-averaged copy (the learner's target of ``main``) is unrolled without gradient and
gives both the critic's target and, with the trust region, the average policy. The stored
extras give ``mu(a_t|x_t)`` (and ``mu(.|x_t)`` for TIS); demo steps carry ``mu = 1`` for
the recorded action (:func:`agents.reactor.acting.demo_extras`), so agent and demo
elements of one batch go through the same formulas.
"""

from __future__ import annotations

import torch

from agents.core.batch import LearnerView, LossOutput, TorchBatch
from agents.core.losses import unroll
from agents.core.networks import LSTMState, NetworkOutput
from agents.reactor.acting import BEHAVIOUR, MU
from agents.reactor.loss import ReactorLossInputs, reactor_loss

POLICY = "logits"
"""Head of ``main`` with the policy logits ``[T, B, A]``."""
CRITIC = "critic"
"""Head of ``main`` with the critic: ``[T, B, A]`` values or ``[T, B, A, N]`` atom logits."""


class CriticTorso:
    """``network`` as :func:`~agents.core.losses.unroll` calls it, with the policy head fed the
    torso's output detached: the policy gradient trains the policy head only, and the shared
    encoder and LSTM learn from the critic alone (Gruslys et al. 2018, appendix: gradients
    from the policy are blocked from the shared part, against positive feedback loops between
    pi and q through shared representations). The outputs are the network's own."""

    def __init__(self, network: torch.nn.Module):
        self.network = network

    def __call__(
        self, obs: dict, prev_action: torch.Tensor, prev_reward: torch.Tensor, state: LSTMState
    ) -> NetworkOutput:
        out, state = self.network.torso(obs, prev_action, prev_reward, state)
        heads = {
            k: head(out.detach() if k == POLICY else out) for k, head in self.network.heads.items()
        }
        return NetworkOutput(heads, state)


def _extra(batch: TorchBatch, name: str) -> torch.Tensor:
    if name not in batch.extras:
        raise ValueError(
            f"expected the per-step extra {name!r} in replayed sequences, got "
            f"{sorted(batch.extras)} (sequences written with another --policy-gradient?)"
        )
    return batch.extras[name]


def reactor_learner_loss(learner: LearnerView, batch: TorchBatch) -> LossOutput:
    """The Reactor loss over the trace (after burn-in); priorities from the critic's error."""
    cfg = learner.cfg
    burn = cfg.burn_in
    network = learner.network if cfg.policy_trains_torso else CriticTorso(learner.network)
    online = unroll(network, batch, burn)
    average = unroll(learner.target, batch, 0, grad=False)
    s = slice(burn, None)
    mu = _extra(batch, BEHAVIOUR)[s] if cfg.policy_gradient == "tis" else None
    inputs = ReactorLossInputs(
        policy_logits=online.heads[POLICY][s],
        critic=online.heads[CRITIC][s],
        target_critic=average.heads[CRITIC][s],
        average_logits=average.heads[POLICY][s] if cfg.trust_region else None,
        action=batch.action[s],
        reward=batch.reward[s],
        terminal=batch.terminal[s],
        mask=batch.mask[s],
        mu_taken=_extra(batch, MU)[s],
        mu=mu,
        weight=batch.weight,
    )
    out = reactor_loss(inputs, cfg, cfg.discount)
    pad = (0, 0, burn, 0)  # the burn-in steps: no priority, not learned
    td_abs = torch.nn.functional.pad(out.priority, pad)
    learn_mask = torch.nn.functional.pad(out.learn_mask, pad, value=False)
    return LossOutput(out.loss, td_abs, learn_mask, out.metrics)


__all__ = ["CRITIC", "POLICY", "reactor_learner_loss"]

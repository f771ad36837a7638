"""The Reactor's learner loss: unroll the networks over a replayed batch and hand the whole
sequences, with the steps to learn from, to :func:`agents.reactor.loss.reactor_loss`.

``main`` is unrolled from the stored LSTM state with the burn-in (no gradient there, except
in sequences that start their episode); its Polyak-averaged copy (the learner's target of
``main``) is unrolled without gradient and gives both the critic's target and, with the trust
region, the average policy. The loss learns from the core's
:func:`~agents.core.losses.learn_mask`: the steps after the burn-in, and every step of a
sequence that starts its episode (its stored state is the episode's true initial state, so
nothing needs refreshing and the first ``burn_in`` steps of every episode and every demo are
learned too). Retrace targets only look forward, so the steps left out change none. The stored
extras give ``mu(a_t|x_t)`` (and ``mu(.|x_t)`` for TIS); demo steps carry ``mu = 1`` for
the recorded action (:func:`agents.reactor.acting.demo_extras`), so agent and demo
elements of one batch go through the same formulas.
"""

from __future__ import annotations

import torch

from agents.core.batch import LearnerView, LossOutput, TorchBatch
from agents.core.losses import episode_starts, learn_mask, unroll
from agents.core.networks import LSTMState, NetworkOutput, RecurrentNetwork
from agents.reactor.acting import BEHAVIOUR, MU
from agents.reactor.config import ReactorConfig
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
    pi and q through shared representations). The outputs are the network's own; ``burn_in``
    and ``fresh`` are :meth:`RecurrentNetwork.torso`'s (the burn-in of rows that start their
    episode carries the critic's gradient into the torso)."""

    def __init__(self, network: RecurrentNetwork):
        self.network = network

    def __call__(
        self,
        obs: dict,
        prev_action: torch.Tensor,
        prev_reward: torch.Tensor,
        state: LSTMState,
        burn_in: int = 0,
        fresh: torch.Tensor | None = None,
    ) -> NetworkOutput:
        out, state = self.network.torso(obs, prev_action, prev_reward, state, burn_in, fresh)
        return NetworkOutput(self.network.head_outputs(out, detached=(POLICY,)), state)


def _extra(batch: TorchBatch, name: str) -> torch.Tensor:
    if name not in batch.extras:
        raise ValueError(
            f"expected the per-step extra {name!r} in replayed sequences, got "
            f"{sorted(batch.extras)} (sequences written with another --policy-gradient?)"
        )
    return batch.extras[name]


def reactor_learner_loss(learner: LearnerView, batch: TorchBatch, cfg: ReactorConfig) -> LossOutput:
    """The Reactor loss over the learned steps (see the module docstring); priorities from
    the critic's error, 0 on the steps not learned."""
    burn = cfg.burn_in
    if cfg.policy_trains_torso:
        online = unroll(learner.network, batch, burn)
    else:
        fresh = episode_starts(batch) if burn > 0 else None
        online = CriticTorso(learner.network)(
            batch.obs, batch.prev_action, batch.prev_reward, batch.state, burn, fresh
        )
    average = unroll(learner.target, batch, 0, grad=False)
    inputs = ReactorLossInputs(
        policy_logits=online.heads[POLICY],
        critic=online.heads[CRITIC],
        target_critic=average.heads[CRITIC],
        average_logits=average.heads[POLICY] if cfg.trust_region else None,
        action=batch.action,
        reward=batch.reward,
        terminal=batch.terminal,
        mask=batch.mask,
        mu_taken=_extra(batch, MU),
        mu=_extra(batch, BEHAVIOUR) if cfg.policy_gradient == "tis" else None,
        weight=batch.weight,
        learn=learn_mask(batch, burn),
    )
    out = reactor_loss(inputs, cfg, cfg.discount)
    return LossOutput(out.loss, out.priority, out.learn_mask, out.metrics)


__all__ = ["CRITIC", "POLICY", "reactor_learner_loss"]

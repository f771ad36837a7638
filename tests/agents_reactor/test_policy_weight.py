"""The policy loss's own importance-weight exponent (``--policy-priority-beta``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.reactor import ReactorConfig
from agents.reactor.learning import policy_weight
from agents.reactor.loss import ReactorLossInputs, reactor_loss


def normalised_weights(n_times_p: np.ndarray, beta: float) -> torch.Tensor:
    """The mix's weights: ``(N P)^-beta`` over their batch maximum."""
    w = n_times_p ** (-beta)
    return torch.as_tensor(w / w.max(), dtype=torch.float32)


def test_policy_weight_is_the_replays_weight_at_the_policys_exponent():
    n_times_p = np.array([0.2, 0.7, 1.0, 3.5, 9.0])
    cfg = ReactorConfig(env="CartPole-v1", priority_beta=0.6, policy_priority_beta=1.0)
    got = policy_weight(normalised_weights(n_times_p, 0.6), cfg)
    torch.testing.assert_close(got, normalised_weights(n_times_p, 1.0))
    same = ReactorConfig(env="CartPole-v1", priority_beta=0.6, policy_priority_beta=0.6)
    assert policy_weight(normalised_weights(n_times_p, 0.6), same) is None
    assert policy_weight(normalised_weights(n_times_p, 0.6), ReactorConfig()) is None


def test_priority_beta_zero_cannot_give_the_policy_another_exponent():
    with pytest.raises(ValueError, match="--priority-beta: expected > 0"):
        ReactorConfig(env="CartPole-v1", priority_beta=0.0, policy_priority_beta=1.0).validate()
    with pytest.raises(ValueError, match="--policy-priority-beta: expected in"):
        ReactorConfig(env="CartPole-v1", policy_priority_beta=1.5).validate()


def inputs(weight: torch.Tensor, pw: torch.Tensor | None) -> ReactorLossInputs:
    torch.manual_seed(0)
    t, b, a = 6, 3, 2
    return ReactorLossInputs(
        policy_logits=torch.randn(t, b, a, requires_grad=True),
        critic=torch.randn(t, b, a, requires_grad=True),
        target_critic=torch.randn(t, b, a),
        average_logits=None,
        action=torch.randint(0, a, (t, b)),
        reward=torch.ones(t, b),
        terminal=torch.zeros(t, b),
        mask=torch.ones(t, b, dtype=torch.bool),
        mu_taken=torch.full((t, b), 0.5),
        mu=None,
        weight=weight,
        policy_weight=pw,
    )


def test_policy_weight_scales_the_policy_gradient_alone():
    cfg = ReactorConfig(env="CartPole-v1", distributional=False, policy_priority_beta=1.0)
    weight = torch.tensor([1.0, 0.5, 0.25])
    grads = {}
    for name, pw in {"shared": None, "own": torch.tensor([0.0, 0.5, 1.0])}.items():
        x = inputs(weight, pw)
        reactor_loss(x, cfg, 0.99).loss.backward()
        grads[name] = (x.policy_logits.grad, x.critic.grad)
    # the critic learns at the critic's weights either way
    torch.testing.assert_close(grads["own"][1], grads["shared"][1])
    pol_shared, pol_own = grads["shared"][0], grads["own"][0]
    assert pol_own[:, 0].abs().sum() == 0  # policy weight 0: sequence 0 moves no policy
    torch.testing.assert_close(pol_own[:, 1], pol_shared[:, 1])  # 0.5 both ways
    torch.testing.assert_close(pol_own[:, 2], pol_shared[:, 2] * 4.0)  # 1 vs 0.25

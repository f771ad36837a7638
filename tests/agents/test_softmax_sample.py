"""The one behaviour policy of the actor-critics (Reactor, PPO, RND-PPO): a sample from the
policy mixed with a uniform action, mu = (1 - epsilon) pi + epsilon / A, one epsilon per
env, storing what each learner needs of mu."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from agents.core.networks import NetworkOutput
from agents.core.policy import SoftmaxSample, mixture_log_probs, selector_part


def test_mixture_log_probs_by_hand():
    logits = torch.log(torch.tensor([[0.7, 0.2, 0.1]]))
    mu = mixture_log_probs(logits, 0.3).exp()
    torch.testing.assert_close(mu, 0.7 * torch.tensor([[0.7, 0.2, 0.1]]) + 0.1)
    torch.testing.assert_close(mixture_log_probs(logits, 0.0), torch.log_softmax(logits, -1))
    torch.testing.assert_close(mixture_log_probs(logits, 1.0).exp(), torch.full((1, 3), 1 / 3))
    with pytest.raises(ValueError, match=r"expected epsilon in \[0, 1\]"):
        mixture_log_probs(logits, -0.1)


def test_one_epsilon_per_env_is_the_same_mixture_row_by_row():
    logits = torch.randn(3, 4, dtype=torch.float64)
    eps = torch.tensor([[0.0], [0.3], [1.0]], dtype=torch.float64)
    rows = torch.cat([mixture_log_probs(logits[i : i + 1], float(eps[i])) for i in range(3)])
    torch.testing.assert_close(mixture_log_probs(logits, eps), rows)
    with pytest.raises(ValueError, match=r"expected epsilon in \[0, 1\]"):
        mixture_log_probs(logits, eps * 2)


def _out(probs: list[list[float]], **heads: torch.Tensor) -> NetworkOutput:
    return NetworkOutput({"logits": torch.log(torch.tensor([probs])), **heads}, None)


def test_samples_follow_the_mixture_and_store_what_is_asked():
    out = _out([[0.9, 0.1], [0.5, 0.5]], value=torch.tensor([[1.5, -2.0]]))
    selector = SoftmaxSample("logits", [0.2, 0.0], ("mu", "log_prob", "behaviour"), ("value",),
                             env_index=np.array([4, 5]))  # fmt: skip
    rng = np.random.default_rng(0)
    steps = [selector(out, rng) for _ in range(4000)]
    actions = np.stack([s.action for s in steps])
    mu = np.array([[0.8 * 0.9 + 0.1, 0.8 * 0.1 + 0.1], [0.5, 0.5]])
    for s in steps[:20]:
        np.testing.assert_allclose(s.extras["behaviour"], mu, rtol=1e-6)
        np.testing.assert_allclose(s.extras["mu"], mu[[0, 1], s.action], rtol=1e-6)
        np.testing.assert_allclose(np.exp(s.extras["log_prob"]), s.extras["mu"], rtol=1e-6)
        assert s.extras["env"].tolist() == [4, 5] and s.extras["value"].tolist() == [1.5, -2.0]
    assert abs((actions[:, 0] == 0).mean() - mu[0, 0]) < 0.03  # sampled from mu, not pi
    assert abs((actions[:, 1] == 0).mean() - 0.5) < 0.03
    assert set(SoftmaxSample("logits", 0.0, ("mu",))(out, rng).extras) == {"mu"}


def test_the_stored_log_probability_is_the_mixtures_not_the_policys():
    out = _out([[0.999, 0.0005, 0.0005]] * 4)
    step = SoftmaxSample("logits", 0.3, ("log_prob",))(out, np.random.default_rng(0))
    mu = np.where(step.action == 0, 0.7 * 0.999 + 0.1, 0.7 * 0.0005 + 0.1)
    np.testing.assert_allclose(np.exp(step.extras["log_prob"]), mu, rtol=1e-5)
    # where the policy is near certain, its own log-probability is far from the mixture's
    assert step.extras["log_prob"].min() > math.log(0.1) - 1e-6


def test_parts_keep_their_epsilons_and_pool_wide_env_indices():
    whole = SoftmaxSample("logits", np.linspace(0.1, 0.6, 6), ("log_prob",), ("value_ext",),
                          env_index=np.arange(6))  # fmt: skip
    parts = [selector_part(whole, k * 3, k * 3 + 3) for k in range(2)]
    np.testing.assert_array_equal(np.concatenate([p.env_index for p in parts]), np.arange(6))
    np.testing.assert_allclose(parts[1].epsilons, np.linspace(0.1, 0.6, 6)[3:])
    assert parts[1].values == ("value_ext",) and parts[1].store == ("log_prob",)
    one = SoftmaxSample("logits", 0.1).part(2, 4)
    assert float(one.epsilons) == 0.1 and one.env_index is None

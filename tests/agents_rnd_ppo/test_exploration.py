"""Epsilon-greedy on top of the policy: the behaviour mixture and its log-probabilities."""

from __future__ import annotations

import math

import pytest
import torch

from agents.rnd_ppo.exploration import mixture_log_probs, sample_behaviour


def test_mixture_log_probs_by_hand():
    logits = torch.log(torch.tensor([[0.7, 0.2, 0.1]]))
    mu = mixture_log_probs(logits, 0.3).exp()
    torch.testing.assert_close(mu, 0.7 * torch.tensor([[0.7, 0.2, 0.1]]) + 0.1)
    torch.testing.assert_close(mixture_log_probs(logits, 0.0), torch.log_softmax(logits, -1))
    torch.testing.assert_close(mixture_log_probs(logits, 1.0).exp(), torch.full((1, 3), 1 / 3))
    with pytest.raises(ValueError, match=r"expected epsilon in \[0, 1\]"):
        mixture_log_probs(logits, -0.1)


def test_samples_follow_the_mixture():
    logits = torch.tensor([[10.0, -10.0, -10.0, -10.0]]).expand(40_000, 4)
    out = sample_behaviour(logits, 0.2, torch.Generator().manual_seed(0))
    freq = torch.bincount(out.action, minlength=4).float() / 40_000
    expected = torch.tensor([0.8 + 0.05, 0.05, 0.05, 0.05])
    assert torch.allclose(freq, expected, atol=0.01), freq
    # the stored log-probability is the mixture's, not the policy's
    assert float(out.log_prob[out.action == 1][0]) == pytest.approx(math.log(0.05), rel=1e-3)

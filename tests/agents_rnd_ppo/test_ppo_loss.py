"""The clipped surrogate, the value losses and the combined PPO loss on hand cases."""

from __future__ import annotations

import math

import pytest
import torch

from agents.rnd_ppo.config import PPOSettings
from agents.rnd_ppo.ppo_loss import (
    ValueTerms,
    clipped_surrogate,
    combined_advantage,
    normalize_advantage,
    ppo_loss,
    value_loss,
)

# ratios 0.5, 1.0, 1.5, 1.05 with advantages 1, -1, 1, -2 and eps = 0.2:
#   min(r A, clip(r) A) = min(.5, .8) = .5 | -1 | min(1.5, 1.2) = 1.2 | min(-2.1, -2.1) = -2.1
RATIO = torch.tensor([[0.5, 1.0, 1.5, 1.05]])
ADV = torch.tensor([[1.0, -1.0, 1.0, -2.0]])
OLD = torch.zeros(1, 4)


def test_clipped_surrogate_by_hand():
    log_prob = RATIO.log().requires_grad_(True)
    loss, ratio = clipped_surrogate(log_prob, OLD, ADV, clip_range=0.2)
    assert float(loss.detach()) == pytest.approx(-(0.5 - 1.0 + 1.2 - 2.1) / 4)
    torch.testing.assert_close(ratio, RATIO)
    loss.backward()
    # d/dlog pi of -(r A)/4 is -(r A)/4 where unclipped; 0 for the clipped 1.5 (A > 0)
    torch.testing.assert_close(log_prob.grad, torch.tensor([[-0.125, 0.25, 0.0, 0.525]]))


def test_value_loss_plain_and_clipped():
    terms = ValueTerms(
        value=torch.tensor([[1.0, 2.0]]),
        old_value=torch.tensor([[0.0, 2.0]]),
        returns=torch.tensor([[1.0, 0.0]]),
    )
    # plain: 0.5 * mean(0, 4) = 1
    assert float(value_loss(terms, None)) == pytest.approx(1.0)
    # clipped (eps .2): step 0's V_c = 0 + 0.2 -> max(0, .64); step 1 unchanged -> 4
    assert float(value_loss(terms, 0.2)) == pytest.approx(0.5 * (0.64 + 4.0) / 2)


def test_combined_and_normalised_advantage():
    ext, intr = torch.tensor([[1.0, 2.0]]), torch.tensor([[3.0, -1.0]])
    torch.testing.assert_close(combined_advantage(ext, intr, 2.0, 1.0), torch.tensor([[5.0, 3.0]]))
    torch.testing.assert_close(combined_advantage(ext, None, 2.0, 1.0), torch.tensor([[2.0, 4.0]]))
    adv = torch.tensor([[1.0, 2.0, 3.0, 100.0]])
    mask = torch.tensor([[True, True, True, False]])
    norm = normalize_advantage(adv, mask)
    std = math.sqrt(2 / 3)
    torch.testing.assert_close(
        norm, torch.tensor([[-1 / std, 0.0, 1 / std, 0.0]]), atol=1e-6, rtol=0
    )


def test_ppo_loss_combines_terms_and_reports_metrics():
    settings = PPOSettings(clip_range=0.2, clip_value=False, ent_coef=0.01, vf_coef=0.5)
    settings.norm_adv = False
    heads = {
        "ext": ValueTerms(torch.ones(1, 4), torch.ones(1, 4), torch.full((1, 4), 3.0)),
        "int": ValueTerms(torch.zeros(1, 4), torch.zeros(1, 4), torch.ones(1, 4)),
    }
    entropy = torch.full((1, 4), 1.5)
    out = ppo_loss(RATIO.log(), OLD, entropy, ADV, heads, settings)
    pg = 0.35
    v_ext, v_int = 0.5 * 4.0, 0.5 * 1.0
    assert float(out.loss) == pytest.approx(pg + 0.5 * (v_ext + v_int) - 0.01 * 1.5)
    m = out.metrics
    assert m["policy_loss"] == pytest.approx(pg)
    assert m["value_loss/ext"] == pytest.approx(v_ext)
    assert m["value_loss/int"] == pytest.approx(v_int)
    assert m["clip_fraction"] == pytest.approx(0.5)  # 0.5 and 1.5 are outside [0.8, 1.2]
    kl = sum((r - 1) - math.log(r) for r in (0.5, 1.0, 1.5, 1.05)) / 4
    assert m["approx_kl"] == pytest.approx(kl)
    assert m["entropy"] == pytest.approx(1.5)


def test_ppo_loss_ignores_masked_steps():
    settings = PPOSettings(clip_range=0.2)
    heads = {"ext": ValueTerms(torch.zeros(2, 3), torch.zeros(2, 3), torch.ones(2, 3))}
    log_prob = torch.randn(2, 3, generator=torch.Generator().manual_seed(0))
    adv = torch.randn(2, 3, generator=torch.Generator().manual_seed(1))
    mask = torch.tensor([[True, True, False], [True, False, False]])
    a = ppo_loss(log_prob, OLD[:, :3].expand(2, 3), torch.ones(2, 3), adv, heads, settings, mask)
    junk = torch.where(mask, adv, torch.full_like(adv, 1e6))
    b = ppo_loss(log_prob, OLD[:, :3].expand(2, 3), torch.ones(2, 3), junk, heads, settings, mask)
    assert float(a.loss) == pytest.approx(float(b.loss))

"""ACER's trust-region projection (its linearised KL bound holds, and it is the closest
step to g that does), the surrogate built on it, and the Polyak-averaged policy."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from agents.reactor.trust_region import (
    kl_gradient_logits,
    polyak_update_,
    trust_region_loss,
    trust_region_project,
)


def test_projection_by_hand():
    g, k = torch.tensor([2.0, 0.0]), torch.tensor([1.0, 1.0])
    # k^T g = 2 > delta = 1: z = g - (2 - 1) / 2 * k = (1.5, -0.5), k^T z = 1
    torch.testing.assert_close(trust_region_project(g, k, 1.0), torch.tensor([1.5, -0.5]))
    # inside (k^T g = 2 <= 3): unchanged; k = 0: unchanged
    torch.testing.assert_close(trust_region_project(g, k, 3.0), g)
    torch.testing.assert_close(trust_region_project(g, torch.zeros(2), 0.0), g)


@pytest.mark.parametrize("delta", [0.0, 0.1, 1.0])
def test_projection_keeps_the_bound_and_is_the_closest_feasible_step(delta):
    rng = np.random.default_rng(0)
    g = torch.tensor(rng.normal(size=(50, 6)))
    k = torch.tensor(rng.normal(size=(50, 6)))
    z = trust_region_project(g, k, delta)
    kz, kg = (k * z).sum(-1), (k * g).sum(-1)
    assert bool((kz <= delta + 1e-9).all())  # the linearised KL bound holds
    inside = kg <= delta
    torch.testing.assert_close(z[inside], g[inside])  # z* = g inside the region
    torch.testing.assert_close(kz[~inside], torch.full_like(kz[~inside], delta))  # on the edge
    # optimality: any other feasible point is at least as far from g
    other = z[~inside] + torch.tensor(rng.normal(size=(int((~inside).sum()), 6)))
    k_out, g_out = k[~inside], g[~inside]
    excess = ((k_out * other).sum(-1, keepdim=True) - delta).clamp_min(0)
    other = other - excess / (k_out * k_out).sum(-1, keepdim=True) * k_out  # made feasible
    assert bool(((other - g_out).norm(dim=-1) >= (z[~inside] - g_out).norm(dim=-1) - 1e-9).all())


def test_kl_gradient_is_autograd_of_the_kl():
    avg = torch.tensor([[0.3, -0.2, 1.0]], dtype=torch.float64)
    logits = torch.tensor([[-0.5, 0.4, 0.1]], dtype=torch.float64, requires_grad=True)
    p_avg = torch.softmax(avg, -1)
    kl = (p_avg * (torch.log_softmax(avg, -1) - torch.log_softmax(logits, -1))).sum()
    kl.backward()
    torch.testing.assert_close(kl_gradient_logits(logits, avg), logits.grad)


def tiny_policy(seed: int) -> nn.Linear:
    torch.manual_seed(seed)
    return nn.Linear(3, 4).double()


def objective_of(logits: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """A per-step objective: expected Q under pi ([T, B])."""
    return (torch.softmax(logits, -1) * q).sum(-1)


def test_trust_region_loss_gradient():
    net, avg = tiny_policy(0), tiny_policy(1)
    x = torch.randn(5, 2, 3, dtype=torch.float64)
    q = 10.0 * torch.randn(5, 2, 4, dtype=torch.float64)
    weight = torch.rand(5, 2, dtype=torch.float64)
    weight[0] = 0.0  # e.g. burn-in
    avg_logits = avg(x).detach()

    # delta = inf: the plain weighted policy gradient
    logits = net(x)
    out = trust_region_loss(objective_of(logits, q), logits, avg_logits, weight, float("inf"))
    grads = torch.autograd.grad(out.loss, list(net.parameters()))
    plain = -(weight * objective_of(net(x), q)).sum()
    for a, b in zip(grads, torch.autograd.grad(plain, list(net.parameters()))):
        torch.testing.assert_close(a, b)
    assert not bool(out.active.any())

    # finite delta: d loss / d logits = -w z*, and z* keeps k^T z* <= delta per step
    logits = net(x)
    out = trust_region_loss(objective_of(logits, q), logits, avg_logits, weight, 0.01)
    (d_logits,) = torch.autograd.grad(out.loss, logits, retain_graph=True)
    k = kl_gradient_logits(logits, avg_logits)
    (g,) = torch.autograd.grad(objective_of(logits, q).sum(), logits)
    z = trust_region_project(g, k, 0.01)
    torch.testing.assert_close(d_logits, -weight[..., None] * z)
    assert bool(((k * z).sum(-1) <= 0.01 + 1e-9).all())
    assert bool(out.active.any())
    assert not bool(out.active[0].any())  # weight 0 steps never count as active


def test_polyak_average():
    avg, online = nn.BatchNorm1d(3).double(), nn.BatchNorm1d(3).double()
    with torch.no_grad():
        online.weight.fill_(2.0)
        online.running_mean.fill_(4.0)
        online.num_batches_tracked.fill_(7)
    polyak_update_(avg, online, tau=0.75)  # avg = 0.75 avg + 0.25 online
    torch.testing.assert_close(avg.weight, torch.full((3,), 0.75 * 1 + 0.25 * 2).double())
    torch.testing.assert_close(avg.running_mean, torch.full((3,), 1.0).double())
    assert int(avg.num_batches_tracked) == 7
    with pytest.raises(ValueError, match="tau"):
        polyak_update_(avg, online, 1.5)

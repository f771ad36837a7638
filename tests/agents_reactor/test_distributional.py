"""The C51 projection and the distributional Retrace target, by hand and by their
invariants (mass conservation, mean = expected-value Retrace)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.reactor.distributional import (
    atoms,
    categorical_cross_entropy,
    distributional_retrace_targets,
    project_categorical,
    total_variation,
)
from agents.reactor.retrace import retrace_targets

P = torch.tensor([0.1, 0.2, 0.3, 0.4, 0.0], dtype=torch.float64)  # on z = 0, 1, 2, 3, 4


def proj(shift: float, scale: float) -> torch.Tensor:
    s = torch.tensor(shift, dtype=torch.float64)
    return project_categorical(P, s, torch.tensor(scale, dtype=torch.float64), 0.0, 4.0)


def test_projection_by_hand():
    # moved to 0.5, 1.5, 2.5, 3.5, (4.5 -> 4): each splits half-half between neighbours
    torch.testing.assert_close(proj(0.5, 1.0), torch.tensor([0.05, 0.15, 0.25, 0.35, 0.2]).double())
    # moved to 1, 1.5, 2, 2.5, 3
    torch.testing.assert_close(proj(1.0, 0.5), torch.tensor([0.0, 0.2, 0.6, 0.2, 0.0]).double())
    # identity, everything clipped below, a point mass (scale 0) between atoms
    torch.testing.assert_close(proj(0.0, 1.0), P)
    torch.testing.assert_close(proj(-10.0, 1.0), torch.tensor([1.0, 0, 0, 0, 0]).double())
    torch.testing.assert_close(proj(2.25, 0.0), torch.tensor([0, 0, 0.75, 0.25, 0]).double())


def test_projection_conserves_mass_and_mean_of_signed_masses():
    rng = np.random.default_rng(0)
    probs = torch.tensor(rng.normal(size=(4, 3, 11)))  # signed, like Retrace mixtures
    shift = torch.tensor(rng.uniform(-1, 1, size=(4, 3)))
    scale = torch.tensor(rng.uniform(0, 0.8, size=(4, 3)))  # |shift + scale z| <= 5: no clip
    out = project_categorical(probs, shift, scale, -5.0, 5.0)
    torch.testing.assert_close(out.sum(-1), probs.sum(-1))
    z = atoms(11, -5.0, 5.0).double()
    moved_mean = (probs * (shift[..., None] + scale[..., None] * z)).sum(-1)
    torch.testing.assert_close((out * z).sum(-1), moved_mean)
    # clipped atoms keep their mass (at the edge)
    far = project_categorical(probs, shift + 100.0, scale, -5.0, 5.0)
    torch.testing.assert_close(far[..., -1], probs.sum(-1))


def test_distributional_retrace_by_hand():
    # z = 0, 1, 2; A = 2; T = 3 (positions 0, 1 real, 2 bootstraps); gamma = 0.5
    # q(x_1, 0) = d0, q(x_1, 1) = d2; q(x_2, .) = d1; pi = (0.5, 0.5); a_1 = 1, c_1 = 0.5
    d = torch.eye(3, dtype=torch.float64)
    target = torch.stack(
        [torch.stack([d[0], d[0]]), torch.stack([d[0], d[2]]), torch.stack([d[1], d[1]])]
    )[:, None]  # [T=3, B=1, A=2, N=3]
    pi = torch.full((3, 1, 2), 0.5, dtype=torch.float64)
    action = torch.tensor([[0], [1], [0]])
    reward = torch.tensor([[0.0], [0.5], [0.0]], dtype=torch.float64)
    mask = torch.tensor([[True], [True], [False]])
    traces = torch.tensor([[1.0], [0.5], [1.0]], dtype=torch.float64)
    no_term = torch.zeros(3, 1, dtype=torch.float64)
    out = distributional_retrace_targets(
        reward, no_term, mask, action, target, pi, traces, 0.5, 0.0, 2.0
    )[:, 0]
    # t=0, n=1: weight 1, G = 0, Gamma = 0.5, mixture 0.5 d0 + 0.5 d2 - 0.5 d2 = 0.5 d0
    #           -> atoms at 0, 0.5, 1: [0.5, 0, 0]
    #      n=2: weight c_1 = 0.5, G = 0.25, Gamma = 0.25, mixture d1 -> 0.5 -> [.5, .5, 0] * 0.5
    # t=1, n=1: weight 1, G = 0.5, Gamma = 0.5, mixture d1 -> atom at 1 -> [0, 1, 0]
    expected = torch.tensor([[0.75, 0.25, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]).double()
    torch.testing.assert_close(out, expected)
    # the mean is the expected-value Retrace target: Q_ret_1 = 0.5 + 0.5 * 1 = 1,
    # Q_ret_0 = 0.5 * (V_1 + c_1 (Q_ret_1 - Q_1)) = 0.5 * (1 + 0.5 * (1 - 2)) = 0.25
    torch.testing.assert_close(
        out @ torch.tensor([0.0, 1.0, 2.0]).double(), torch.tensor([0.25, 1, 0]).double()
    )

    # a termination at step 0 collapses its target to a point mass at r_0 (0.5 -> [.5, .5, 0])
    term = torch.tensor([[1.0], [0.0], [0.0]], dtype=torch.float64)
    mask0 = torch.tensor([[True], [False], [False]])
    reward0 = torch.tensor([[0.5], [0.0], [0.0]], dtype=torch.float64)
    out = distributional_retrace_targets(
        reward0, term, mask0, action, target, pi, traces, 0.5, 0.0, 2.0
    )[:, 0]
    torch.testing.assert_close(out[0], torch.tensor([0.5, 0.5, 0.0]).double())
    torch.testing.assert_close(out[1:], torch.zeros(2, 3).double())


@pytest.mark.parametrize("seed", range(3))
def test_distributional_retrace_mass_and_mean(seed):
    rng = np.random.default_rng(seed)
    t_len, b, a, gamma = 8, 5, 3, 0.9
    z = atoms(101, -50.0, 50.0).double()
    # distributions supported on |z| <= 5, rewards in [-1, 1]: no backed-up atom is clipped
    logits = torch.tensor(rng.normal(size=(t_len, b, a, 101)))
    logits[..., z.abs() > 5] = -torch.inf
    target = torch.softmax(logits, -1)
    pi = torch.softmax(torch.tensor(rng.normal(size=(t_len, b, a))), -1)
    action = torch.tensor(rng.integers(0, a, size=(t_len, b)))
    reward = torch.tensor(rng.uniform(-1, 1, size=(t_len, b)))
    traces = torch.tensor(rng.uniform(0, 1, size=(t_len, b)))
    mask = torch.zeros(t_len, b, dtype=torch.bool)
    term = torch.zeros(t_len, b, dtype=torch.float64)
    for j in range(b):
        n_real = int(rng.integers(1, t_len))
        mask[:n_real, j] = True
        if j % 2:
            term[n_real - 1, j] = 1.0
    out = distributional_retrace_targets(
        reward, term, mask, action, target, pi, traces, gamma, -50.0, 50.0
    )
    torch.testing.assert_close(out.sum(-1), mask.double())  # mass 1 where learned, else 0
    q = (target * z).sum(-1)  # [T, B, A]
    q_taken = q.gather(-1, action[..., None]).squeeze(-1)
    expected = retrace_targets(reward, term, mask, q_taken, (pi * q).sum(-1), traces, gamma)
    torch.testing.assert_close(out @ z, expected)


def test_cross_entropy_gradient_is_the_kl_gradient_and_tv():
    target = torch.tensor([0.2, 0.5, 0.3], dtype=torch.float64)
    logits = torch.tensor([0.1, -0.3, 0.7], dtype=torch.float64, requires_grad=True)
    categorical_cross_entropy(target, torch.log_softmax(logits, -1)).backward()
    # d/dlogits of -sum q* log softmax = softmax - q*
    torch.testing.assert_close(logits.grad, torch.softmax(logits.detach(), -1) - target)
    tv = total_variation(target, torch.tensor([0.5, 0.5, 0.0]).double())
    assert float(tv) == pytest.approx(0.3)

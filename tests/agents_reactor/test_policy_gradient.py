"""beta-LOO and ACER's truncated IS: the autograd gradient of each surrogate against the
estimator's formula, by hand on a tiny case and on random ones."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.reactor.policy_gradient import beta_loo_loss, entropy, loo_beta, tis_loss


def dpi_dlogits(pi: np.ndarray, a: int) -> np.ndarray:
    """grad_logits pi(a) = pi(a) (e_a - pi)."""
    return pi[a] * (np.eye(len(pi))[a] - pi)


def grad_of(loss_fn, logits: np.ndarray, *args, **kwargs) -> np.ndarray:
    x = torch.tensor(logits, dtype=torch.float64, requires_grad=True)
    loss_fn(x, *args, **kwargs).sum().backward()
    return x.grad.numpy()


def t(x) -> torch.Tensor:
    return torch.as_tensor(np.asarray(x), dtype=torch.float64)


def test_beta():
    mu = t([0.25, 0.5, 1.0])
    torch.testing.assert_close(loo_beta(mu, 1.0), t([1.0, 1.0, 1.0]))  # c = 1: beta = 1
    torch.testing.assert_close(loo_beta(mu, 2.0), t([2.0, 2.0, 1.0]))
    torch.testing.assert_close(loo_beta(mu, 10.0), t([4.0, 2.0, 1.0]))  # 1/mu
    with pytest.raises(ValueError, match="c >= 1"):
        loo_beta(mu, 0.5)


def test_beta_loo_gradient_by_hand():
    # pi = (0.25, 0.5, 0.25), Q = (1, 2, 3), A = 0, R = 3, mu(A) = 0.5, c = 4 -> beta = 2
    logits = np.log([[[0.25, 0.5, 0.25]]])
    args = (torch.tensor([[0]]), t([[0.5]]), t([[3.0]]), t([[[1.0, 2.0, 3.0]]]))
    # G = 2 (3 - 1) grad pi(0) + sum_a Q(a) grad pi(a)
    #   = 4 * [0.1875, -0.125, -0.0625] + [-0.25, 0, 0.25] = [0.5, -0.5, 0]
    g = grad_of(beta_loo_loss, logits, *args, beta_clip=4.0)
    np.testing.assert_allclose(g[0, 0], [-0.5, 0.5, 0.0], atol=1e-12)


@pytest.mark.parametrize("beta_clip", [1.0, 3.0, float("inf")])
def test_beta_loo_gradient_matches_formula(beta_clip):
    rng = np.random.default_rng(1)
    t_len, b, n = 4, 3, 5
    logits = rng.normal(size=(t_len, b, n))
    action = rng.integers(0, n, size=(t_len, b))
    mu = rng.uniform(0.05, 1.0, size=(t_len, b))
    mu[0, 0] = 1.0  # a demo step
    ret, q = rng.normal(size=(t_len, b)), rng.normal(size=(t_len, b, n))
    g = grad_of(beta_loo_loss, logits, torch.tensor(action), t(mu), t(ret), t(q), beta_clip)
    for i in range(t_len):
        for j in range(b):
            pi = np.exp(logits[i, j]) / np.exp(logits[i, j]).sum()
            a = action[i, j]
            beta = min(beta_clip, 1.0 / mu[i, j])
            want = beta * (ret[i, j] - q[i, j, a]) * dpi_dlogits(pi, a)
            want += sum(q[i, j, k] * dpi_dlogits(pi, k) for k in range(n))
            np.testing.assert_allclose(g[i, j], -want, atol=1e-12)
    # the demo step (mu = 1) has beta = 1 whatever the clip
    assert min(beta_clip, 1.0 / mu[0, 0]) == 1.0


def test_tis_gradient_by_hand():
    # pi = (0.25, 0.5, 0.25), mu = (0.5, 0.1, 0.4), Q = (1, 4, 3) -> V = 3, A = 0, R = 5, c = 1
    logits = np.log([[[0.25, 0.5, 0.25]]])
    args = (torch.tensor([[0]]), t([[[0.5, 0.1, 0.4]]]), t([[5.0]]), t([[[1.0, 4.0, 3.0]]]))
    # taken: min(1, 0.5) (5 - 3) grad log pi(0) = 1 * (e_0 - pi) = [0.75, -0.5, -0.25]
    # correction: [pi - mu]_+ = (0, 0.4, 0); (Q - V)(1) = 1 -> 0.4 (e_1 - pi) = [-.1, .2, -.1]
    g = grad_of(tis_loss, logits, *args, clip=1.0)
    np.testing.assert_allclose(g[0, 0], [-0.65, 0.3, 0.35], atol=1e-12)


@pytest.mark.parametrize("clip", [0.5, 1.0, 10.0])
def test_tis_gradient_matches_acer_formula(clip):
    rng = np.random.default_rng(2)
    t_len, b, n = 3, 4, 4
    logits = rng.normal(size=(t_len, b, n))
    mu = rng.dirichlet(np.ones(n), size=(t_len, b))
    action = np.array([[rng.choice(n, p=mu[i, j]) for j in range(b)] for i in range(t_len)])
    mu[0, 0] = np.eye(n)[action[0, 0]]  # a demo step: mu one-hot on the recorded action
    ret, q = rng.normal(size=(t_len, b)), rng.normal(size=(t_len, b, n))
    g = grad_of(tis_loss, logits, torch.tensor(action), t(mu), t(ret), t(q), clip)
    for i in range(t_len):
        for j in range(b):
            pi = np.exp(logits[i, j]) / np.exp(logits[i, j]).sum()
            a, v = action[i, j], pi @ q[i, j]
            rho = pi / np.maximum(mu[i, j], 1e-300)
            dlog = np.eye(n) - pi  # row k: grad log pi(k)
            # ACER eq. 9: min(c, rho_A) (R - V) grad log pi(A)
            #             + E_{a ~ pi} [1 - c / rho(a)]_+ (Q(a) - V) grad log pi(a)
            want = min(clip, rho[a]) * (ret[i, j] - v) * dlog[a]
            want += sum(
                pi[k] * max(0.0, 1.0 - clip / rho[k]) * (q[i, j, k] - v) * dlog[k] for k in range(n)
            )
            np.testing.assert_allclose(g[i, j], -want, atol=1e-12)


def test_tis_on_a_demo_step_is_the_all_action_gradient():
    logits = np.log([[[0.2, 0.3, 0.5]]])
    pi = np.exp(logits[0, 0])
    q, r = np.array([1.0, -2.0, 0.5]), 4.0
    g = grad_of(tis_loss, logits, torch.tensor([[1]]), t([[[0, 1.0, 0]]]), t([[r]]), t([[q]]))
    v, dlog = pi @ q, np.eye(3) - pi
    want = pi[1] * (r - v) * dlog[1] + sum(pi[k] * (q[k] - v) * dlog[k] for k in (0, 2))
    np.testing.assert_allclose(g[0, 0], -want, atol=1e-12)


def test_entropy():
    logits = t([[[0.0, 0.0, 0.0, 0.0]], [[0.0, -1e9, -1e9, -1e9]]])
    torch.testing.assert_close(entropy(logits), t([[np.log(4.0)], [0.0]]))

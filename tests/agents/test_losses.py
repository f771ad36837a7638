"""Value rescaling and n-step double-Q targets computed by hand."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.core.losses import inverse_value_rescale, n_step_targets, value_rescale


def test_value_rescaling_inverse_roundtrip():
    x = torch.tensor(
        [-1e4, -523.3, -1.0, -1e-3, 0.0, 1e-3, 0.5, 1.0, 7.0, 499.9, 1e5], dtype=torch.float64
    )
    for eps in (1e-3, 1e-2):
        torch.testing.assert_close(inverse_value_rescale(value_rescale(x, eps), eps), x)
        torch.testing.assert_close(value_rescale(inverse_value_rescale(x, eps), eps), x)
    # h(x) = sign(x)(sqrt(|x|+1)-1) + eps x, by hand at x = 3
    assert float(value_rescale(torch.tensor(3.0), 0.01)) == pytest.approx(1.0 + 0.03)


def hand_target(rewards, terminal, mask, values, gamma, n, t):
    """Straight loop: sum rewards while steps are real, stop at termination, bootstrap."""
    g, disc, k = 0.0, 1.0, 0
    for i in range(n):
        j = t + i
        if j >= len(mask) or not mask[j]:
            break
        g += disc * rewards[j]
        disc *= gamma
        k += 1
        if terminal[j]:
            disc = 0.0
            break
    return g + disc * values[t + k]


@pytest.mark.parametrize("n", [1, 3, 5])
def test_n_step_targets_by_hand(n):
    # index in the observation: reward of step t is t, value of observation t is 100 + t
    T = 9
    rewards = np.arange(T, dtype=np.float64)
    values = 100.0 + np.arange(T)
    cases = {
        "full": (np.zeros(T), np.array([1] * (T - 1) + [0], bool)),
        "terminal at 5": (np.eye(1, T, 5)[0], np.array([1] * 6 + [0] * 3, bool)),
        "truncated at 6": (np.zeros(T), np.array([1] * 6 + [0] * 3, bool)),
    }
    gamma = 0.9
    for name, (terminal, mask) in cases.items():
        out = n_step_targets(
            torch.tensor(rewards)[:, None],
            torch.tensor(terminal)[:, None],
            torch.tensor(mask)[:, None],
            torch.tensor(values)[:, None],
            gamma,
            n,
            rescale_eps=None,
        )[:, 0].numpy()
        for t in range(T):
            if mask[t]:
                want = hand_target(rewards, terminal, mask, values, gamma, n, t)
                assert out[t] == pytest.approx(want), (name, t)


def test_n_step_explicit_numbers():
    # 3 real steps then the final observation; terminal on the last step; n = 2
    r = torch.tensor([[1.0], [2.0], [4.0], [0.0]])
    term = torch.tensor([[0.0], [0.0], [1.0], [0.0]])
    mask = torch.tensor([[True], [True], [True], [False]])
    v = torch.tensor([[10.0], [20.0], [30.0], [40.0]])
    out = n_step_targets(r, term, mask, v, 0.5, 2, rescale_eps=None)[:, 0]
    assert out[0].item() == pytest.approx(1 + 0.5 * 2 + 0.25 * 30)
    assert out[1].item() == pytest.approx(2 + 0.5 * 4)  # terminal: no bootstrap
    assert out[2].item() == pytest.approx(4)


def test_n_step_with_rescaling_applies_h_and_h_inverse():
    r = torch.tensor([[1.0], [1.0], [0.0]])
    term = torch.zeros(3, 1)
    mask = torch.tensor([[True], [True], [False]])
    raw_v = torch.tensor([[0.0], [0.0], [50.0]])
    out = n_step_targets(r, term, mask, value_rescale(raw_v), 0.99, 5, rescale_eps=1e-3)
    want = value_rescale(torch.tensor(1 + 0.99 + 0.99**2 * 50.0))
    assert out[0, 0].item() == pytest.approx(want.item(), rel=1e-5)


@pytest.mark.parametrize("n", [1, 4, 10, 20])
def test_n_step_targets_random_batch_by_hand(n):
    # a whole batch at once: every column its own length, half of them terminated, n longer
    # than the sequence in some cases; each real position against the straight loop
    rng = np.random.default_rng(n)
    T, B, gamma = 15, 8, 0.97
    rewards = rng.normal(size=(T, B))
    values = rng.normal(size=(T, B))
    terminal = np.zeros((T, B))
    mask = np.zeros((T, B), bool)
    for b in range(B):  # the last position holds the final observation: never a real step
        length = int(rng.integers(1, T))
        mask[:length, b] = True
        if b % 2:
            terminal[length - 1, b] = 1.0
    out = n_step_targets(
        torch.tensor(rewards),
        torch.tensor(terminal),
        torch.tensor(mask),
        torch.tensor(values),
        gamma,
        n,
        rescale_eps=None,
    ).numpy()
    for b in range(B):
        for t in np.flatnonzero(mask[:, b]):
            want = hand_target(rewards[:, b], terminal[:, b], mask[:, b], values[:, b], gamma, n, t)
            assert out[t, b] == pytest.approx(want), (b, t)

"""Retrace(lambda) traces and expected-value targets, checked by hand and against the
forward-view definition (sum of traced TD errors)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.reactor.retrace import retrace_targets, retrace_traces


def col(*xs: float) -> torch.Tensor:
    """One sequence as a ``[T, 1]`` float64 column."""
    return torch.tensor(xs, dtype=torch.float64)[:, None]


def test_traces_truncate_the_ratio_and_demo_steps_use_pi():
    pi = col(0.2, 0.6, 0.5)
    mu = col(0.4, 0.3, 1.0)  # the last one is a demo step: mu = 1 for the recorded action
    c = retrace_traces(pi, mu, lambda_=0.9)
    # 0.9 * min(1, [0.5, 2.0, 0.5]); the demo step's trace is lambda * pi(a|x)
    torch.testing.assert_close(c, col(0.45, 0.9, 0.45))
    torch.testing.assert_close(retrace_traces(pi, mu, 1.0, clip=3.0), col(0.5, 2.0, 0.5))


# Shared hand example: gamma = 0.5, r = [1, 2, 3, .], Q(x_t, a_t) = [10, 20, 30, 40],
# V(x_t) = [11, 21, 31, 41], traces c = [., 0.5, 0.25, .].
R, Q, V, C = col(1, 2, 3, 0), col(10, 20, 30, 40), col(11, 21, 31, 41), col(9, 0.5, 0.25, 9)


def test_targets_by_hand_full_sequence():
    # positions 0..2 are real steps, position 3 only bootstraps (truncated episode)
    out = retrace_targets(R, col(0, 0, 0, 0), col(1, 1, 1, 0).bool(), Q, V, C, 0.5)
    # Q_ret_2 = 3 + 0.5 * 41                                = 23.5
    # Q_ret_1 = 2 + 0.5 * (31 + 0.25 * (23.5 - 30))        = 16.6875
    # Q_ret_0 = 1 + 0.5 * (21 + 0.5 * (16.6875 - 20))      = 10.671875
    torch.testing.assert_close(out, col(10.671875, 16.6875, 23.5, 0))


def test_targets_by_hand_cut_at_termination():
    # step 1 terminates the episode: positions 2, 3 are padding
    out = retrace_targets(R, col(0, 1, 0, 0), col(1, 1, 0, 0).bool(), Q, V, C, 0.5)
    # Q_ret_1 = 2 (no bootstrap); Q_ret_0 = 1 + 0.5 * (21 + 0.5 * (2 - 20)) = 7
    torch.testing.assert_close(out, col(7, 2, 0, 0))


def test_targets_by_hand_cut_by_padding():
    # the episode was truncated after step 1: observation 2 is real, then padding
    out = retrace_targets(R, col(0, 0, 0, 0), col(1, 1, 0, 0).bool(), Q, V, C, 0.5)
    # Q_ret_1 = 2 + 0.5 * 31 = 17.5 (the trace is cut at 2: full bootstrap from V_2)
    # Q_ret_0 = 1 + 0.5 * (21 + 0.5 * (17.5 - 20)) = 10.875
    torch.testing.assert_close(out, col(10.875, 17.5, 0, 0))


def test_targets_batch_columns_are_independent():
    mask = torch.cat([col(1, 1, 1, 0), col(1, 1, 0, 0), col(1, 1, 0, 0)], 1).bool()
    term = torch.cat([col(0, 0, 0, 0), col(0, 1, 0, 0), col(0, 0, 0, 0)], 1)
    rep = [x.expand(-1, 3) for x in (R, Q, V, C)]
    out = retrace_targets(rep[0], term, mask, rep[1], rep[2], rep[3], 0.5)
    expected = torch.cat(
        [col(10.671875, 16.6875, 23.5, 0), col(7, 2, 0, 0), col(10.875, 17.5, 0, 0)], 1
    )
    torch.testing.assert_close(out, expected)


def forward_view(r, d, m, q, v, c, gamma, t):
    """Q_t + sum_{s >= t} gamma^(s-t) (c_{t+1}..c_s) delta_s, stopping where the data stops."""
    total, weight = q[t], 1.0
    for s in range(t, len(r) - 1):
        if not m[s]:
            break
        if s > t:
            weight *= c[s]
        nxt = 0.0 if d[s] else v[s + 1]
        total += weight * gamma ** (s - t) * (r[s] + gamma * nxt - q[s])
        if d[s] or not m[s + 1]:
            break
    return total


@pytest.mark.parametrize("seed", range(5))
def test_targets_match_the_forward_view(seed):
    rng = np.random.default_rng(seed)
    t_len, b, gamma = 7, 6, 0.9
    r, q, v = (rng.normal(size=(t_len, b)) for _ in range(3))
    c = rng.uniform(0, 1.5, size=(t_len, b))
    m = np.zeros((t_len, b), bool)
    d = np.zeros((t_len, b))
    for j in range(b):
        n_real = rng.integers(1, t_len)  # 1 .. T-1 real steps
        m[:n_real, j] = True
        if j % 2:
            d[n_real - 1, j] = 1.0  # ended by termination
    out = retrace_targets(*(torch.tensor(x) for x in (r, d, m, q, v, c)), gamma).numpy()
    for j in range(b):
        for t in range(t_len):
            want = forward_view(r[:, j], d[:, j], m[:, j], q[:, j], v[:, j], c[:, j], gamma, t)
            assert out[t, j] == pytest.approx(want if m[t, j] else 0.0)

"""Retrace(lambda) over replayed sequences: truncated traces and expected-value targets.

Munos et al. 2016 (arXiv 1606.02647), as used by ACER and the Reactor. Tensors are
time-major ``[T, B]`` and follow :mod:`agents.core.sequences`: position ``t`` holds
observation ``x_t`` and, where ``mask[t]``, the action ``a_t`` taken there, its reward
``r_t`` and ``terminal[t]`` (1 when that action ended the episode by termination). The last
position only provides a bootstrap observation.

Retrace moves ``Q(x_t, a_t)`` towards ::

    Q_ret(x_t, a_t) = Q(x_t, a_t) + sum_{s >= t} gamma^(s-t) (c_{t+1} ... c_s) delta_s
    delta_s = r_s + gamma E_pi Q(x_{s+1}, .) - Q(x_s, a_s)
    c_s     = lambda * min(c_bar, pi(a_s|x_s) / mu(a_s|x_s))    (c_bar = 1: Retrace)

computed backwards with the equivalent recursion ::

    Q_ret_t = r_t + gamma (1 - d_t) [ V_{t+1} + c~_{t+1} (Q_ret_{t+1} - Q_{t+1}) ]
    V_s     = sum_a pi(a|x_s) Q(x_s, a),   Q_s = Q(x_s, a_s)

Where the trace is cut, ``c~``::

    steps     t=0  1  2  3  4  5  6  7
    mask       1   1  1  1  0  0  0  0     episode truncated after step 3 (padding after)
    c~         .  c1 c2 c3  0  0  0  0     position 4 has no action: bootstrap V_4 fully
    terminal   0   0  1  0                 a termination at step 2: Q_ret_2 = r_2, and
                                           Q_ret_1 = r_1 + gamma (V_2 + c2 (r_2 - Q_2))

* ``c~_s = c_s * mask[s]``: a position without a real action (padding, or the bootstrap
  observation of a truncated episode) stops the trace, so the target bootstraps fully from
  ``V_s`` there.
* A termination at step ``s`` zeroes ``gamma (1 - d_s)``: nothing after it is used.
* The last position of a sequence always cuts the trace (it has no successor).
The target at a position with ``mask[t] == False`` and at the last position is 0: a loss
must not learn there. Burn-in is the caller's business: slice the tensors (``[burn:]``)
before calling, or compute over the whole sequence and leave the burn-in out of the loss
(a target only looks forward, so both give the same values after the burn-in).

Demonstrations: a demo step is stored with ``mu(a|x) = 1`` for the recorded action (the
demonstrator is treated as a deterministic behaviour policy), so its trace is ::

    c_s = lambda * min(c_bar, pi(a_s|x_s) / 1) = lambda * pi(a_s|x_s)    (c_bar >= 1)

The ratio never exceeds 1, so it is never truncated: the trace decays exactly as fast as
the learner's own policy disagrees with the demonstrator (a demonstrated action the learner
would rarely take contributes little of what follows it), which keeps Retrace's guarantee
for off-policy data without any special case for demos.
"""

from __future__ import annotations

import torch


def retrace_traces(
    pi_taken: torch.Tensor,
    mu_taken: torch.Tensor,
    lambda_: float = 1.0,
    clip: float = 1.0,
) -> torch.Tensor:
    """Trace coefficients ``c_t = lambda * min(clip, pi(a_t|x_t) / mu(a_t|x_t))``, ``[T, B]``.

    ``pi_taken``: ``[T, B]`` the evaluated policy's probability of the taken action (detach
    it: traces carry no gradient); ``mu_taken``: ``[T, B]`` the behaviour probability stored
    with the step (1 for a demo step). A zero ``mu`` (padding) gives ``lambda * clip``;
    padding is cut by the mask in :func:`retrace_targets` anyway.
    """
    if lambda_ < 0.0 or clip <= 0.0:
        raise ValueError(f"expected lambda >= 0 and clip > 0, got {lambda_}, {clip}")
    ratio = pi_taken / mu_taken.clamp_min(torch.finfo(mu_taken.dtype).tiny)
    return lambda_ * ratio.clamp(max=clip)


def cut_traces(traces: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``c~``: traces zeroed where a position has no real action and at the last position.

    ``traces``: ``[T, B]``; ``mask``: ``[T, B]`` bool. Shared by the expected-value and the
    distributional Retrace, so both cut the same way.
    """
    cut = traces * mask.to(traces.dtype)
    cut[-1] = 0.0
    return cut


def retrace_targets(
    reward: torch.Tensor,
    terminal: torch.Tensor,
    mask: torch.Tensor,
    q_taken: torch.Tensor,
    value: torch.Tensor,
    traces: torch.Tensor,
    discount: float,
) -> torch.Tensor:
    """Expected-value Retrace targets ``Q_ret`` ``[T, B]`` (no gradient flows through them).

    ``reward``, ``terminal``, ``mask``: ``[T, B]`` as stored; ``q_taken``: ``[T, B]``
    ``Q(x_t, a_t)`` and ``value``: ``[T, B]`` ``V(x_t) = sum_a pi(a|x_t) Q(x_t, a)``, both
    from the target critic; ``traces``: ``[T, B]`` from :func:`retrace_traces`.
    Positions without a real action, and the last position, get 0.
    """
    t_len = reward.shape[0]
    if not all(x.shape == reward.shape for x in (terminal, mask, q_taken, value, traces)):
        raise ValueError(
            "expected reward, terminal, mask, q_taken, value and traces of one shape [T, B], got "
            f"{[tuple(x.shape) for x in (reward, terminal, mask, q_taken, value, traces)]}"
        )
    with torch.no_grad():
        c = cut_traces(traces, mask)
        m = mask.to(reward.dtype)
        cont = discount * (1.0 - terminal.to(reward.dtype))
        out = torch.zeros_like(reward)
        for t in range(t_len - 2, -1, -1):
            nxt = value[t + 1] + c[t + 1] * (out[t + 1] - q_taken[t + 1])
            out[t] = m[t] * (reward[t] + cont[t] * nxt)
    return out


__all__ = ["cut_traces", "retrace_targets", "retrace_traces"]

"""The categorical (C51) projection and the Reactor's distributional Retrace.

Return distributions are ``N`` probabilities on the fixed atoms
``z_i = v_min + i * dz``, ``dz = (v_max - v_min) / (N - 1)`` (Bellemare et al. 2017).

Projection. A distribution ``p`` moved to the atoms ``shift + scale * z_j`` is put back on
the grid by splitting each atom's mass between its two grid neighbours (after clipping to
``[v_min, v_max]``)::

    Phi(p)_i = sum_j p_j h_i(clip(shift + scale * z_j)),   h_i(y) = max(0, 1 - |y - z_i| / dz)

It is linear in ``p`` and conserves mass (``sum_i Phi(p)_i = sum_j p_j``), so it also
projects signed mixtures, which distributional Retrace needs.

Distributional Retrace (Gruslys et al. 2018, section 3.2). Retrace rewrites as a mixture
of n-step backups ::

    Q_ret(x_t, a_t) = sum_{n >= 1} sum_a alpha_{n,a} [ G_{t,n} + Gamma_{t,n} Q(x_{t+n}, a) ]
    alpha_{n,a} = (c~_{t+1} ... c~_{t+n-1}) (pi(a|x_{t+n}) - 1{a = a_{t+n}} c~_{t+n})
    G_{t,n}     = sum_{s=t}^{t+n-1} Gamma_{t,s-t} r_s
    Gamma_{t,k} = prod_{s=t}^{t+k-1} gamma (1 - d_s)

with ``c~`` the cut traces of :mod:`agents.reactor.retrace` (0 at a position without a real
action and at the last position, so the sum is finite and ``sum_{n,a} alpha_{n,a} = 1``).
The distributional target backs up the same mixture of n-step *distributions*::

    q*_i(x_t, a_t) = sum_{n >= 1} sum_a alpha_{n,a} sum_j q_j(x_{t+n}, a)
                                                      * h_i(G_{t,n} + Gamma_{t,n} z_j)

and the critic minimises ``KL(q* || q(x_t, a_t))``, whose gradient is that of the cross
entropy ``-sum_i q*_i log q_i(x_t, a_t)``. Single ``alpha`` (hence single ``q*_i``) may be
negative on a sampled trajectory; their expectation under ``mu`` is not, and the KL gradient
is linear in ``q*``, so the update is unbiased for the expected target. A termination
(``Gamma = 0``) collapses a backup to a point mass at its return ``G``.
The mean of ``q*`` (``sum_i z_i q*_i``) equals the expected-value Retrace target whenever no
backed-up atom is clipped at ``v_min``/``v_max``.
"""

from __future__ import annotations

import torch

from agents.reactor.retrace import cut_traces


def atoms(num_atoms: int, v_min: float, v_max: float, device=None) -> torch.Tensor:
    """The support ``z`` ``[N]``: ``num_atoms`` evenly spaced values from v_min to v_max."""
    if num_atoms < 2 or not v_min < v_max:
        raise ValueError(
            f"expected num_atoms >= 2 and v_min < v_max, got {num_atoms}, {v_min}, {v_max}"
        )
    return torch.linspace(v_min, v_max, num_atoms, device=device)


def project_categorical(
    probs: torch.Tensor,
    shift: torch.Tensor,
    scale: torch.Tensor,
    v_min: float,
    v_max: float,
) -> torch.Tensor:
    """``Phi``: the (possibly signed) masses ``probs`` ``[..., N]`` sitting on the atoms
    ``shift + scale * z`` (``shift``, ``scale``: ``[...]``), projected onto the grid ``z``;
    returns ``[..., N]`` with the same total mass per distribution."""
    n = probs.shape[-1]
    z = atoms(n, v_min, v_max, probs.device).to(probs.dtype)
    dz = (v_max - v_min) / (n - 1)
    moved = (shift.unsqueeze(-1) + scale.unsqueeze(-1) * z).clamp(v_min, v_max)
    b = (moved - v_min) / dz  # fractional grid index in [0, N-1]
    lower = b.floor().clamp(0, n - 2)
    upper_w = b - lower  # in [0, 1]; b = N-1 puts everything on the last atom
    lower = lower.long()
    out = torch.zeros_like(probs)
    out.scatter_add_(-1, lower, probs * (1.0 - upper_w))
    out.scatter_add_(-1, lower + 1, probs * upper_w)
    return out


def distributional_retrace_targets(
    reward: torch.Tensor,
    terminal: torch.Tensor,
    mask: torch.Tensor,
    action: torch.Tensor,
    target_probs: torch.Tensor,
    pi: torch.Tensor,
    traces: torch.Tensor,
    discount: float,
    v_min: float,
    v_max: float,
) -> torch.Tensor:
    """The distributional Retrace target ``q*`` ``[T, B, N]`` (no gradient).

    ``reward``, ``terminal``, ``mask``, ``action``: ``[T, B]`` as stored;
    ``target_probs``: ``[T, B, A, N]`` the target critic's return distributions
    ``q_j(x_s, a)``; ``pi``: ``[T, B, A]`` the evaluated policy; ``traces``: ``[T, B]`` from
    :func:`agents.reactor.retrace.retrace_traces`. Rows where ``mask`` is False, and the
    last row, are 0 (nothing to learn there); every other row has total mass 1.
    """
    t_len, b = reward.shape
    if target_probs.shape[:3] != pi.shape or pi.shape[:2] != reward.shape:
        raise ValueError(
            f"expected target_probs [T, B, A, N] and pi [T, B, A] over reward [T, B], got "
            f"{tuple(target_probs.shape)}, {tuple(pi.shape)}, {tuple(reward.shape)}"
        )
    with torch.no_grad():
        c = cut_traces(traces, mask)
        dtype = target_probs.dtype
        # Signed bootstrap mixture at every position s (independent of the start t):
        # M_s = sum_a pi(a|x_s) q(x_s, a) - c~_s q(x_s, a_s)   [T, B, N]
        expected = (pi.to(dtype).unsqueeze(-1) * target_probs).sum(2)
        idx = action.long().clamp(0, target_probs.shape[2] - 1)
        taken = target_probs.gather(
            2, idx[:, :, None, None].expand(-1, -1, 1, target_probs.shape[3])
        )
        mixture = expected - c.to(dtype).unsqueeze(-1) * taken.squeeze(2)
        cont = discount * (1.0 - terminal.to(dtype))
        m = mask.to(dtype)
        out = torch.zeros(t_len, b, target_probs.shape[3], dtype=dtype, device=reward.device)
        # Running quantities for the starts t = 0 .. T-1-n, updated as n grows.
        ret = torch.zeros(t_len - 1, b, dtype=dtype, device=reward.device)  # G_{t,n}
        disc = torch.ones_like(ret)  # Gamma_{t,n}
        weight = m[:-1].clone()  # c~_{t+1} ... c~_{t+n-1}, and mask[t] for the start itself
        for n in range(1, t_len):
            k = t_len - n  # starts t = 0 .. k-1 reach s = t + n <= T-1
            ret = ret[:k] + disc[:k] * reward[n - 1 : n - 1 + k]
            disc = disc[:k] * cont[n - 1 : n - 1 + k]
            if n > 1:
                weight = weight[:k] * c[n - 1 : n - 1 + k]
            else:
                weight = weight[:k]
            if not bool(weight.any()):
                break
            backup = project_categorical(mixture[n : n + k], ret, disc, v_min, v_max)
            out[:k] += weight.unsqueeze(-1) * backup
    return out


def categorical_cross_entropy(target: torch.Tensor, log_probs: torch.Tensor) -> torch.Tensor:
    """``-sum_i q*_i log q_i`` over the last axis: ``target``, ``log_probs`` ``[..., N]``
    -> ``[...]``. Its gradient is that of ``KL(q* || q)`` (the target is a constant)."""
    return -(target.detach() * log_probs).sum(-1)


def total_variation(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """``0.5 * sum_i |p_i - q_i|`` over the last axis, ``[...]``: the Reactor's priority
    for the distributional critic (the expected-value critic uses ``|Q_ret - Q|``)."""
    return 0.5 * (p - q).abs().sum(-1)


__all__ = [
    "atoms",
    "categorical_cross_entropy",
    "distributional_retrace_targets",
    "project_categorical",
    "total_variation",
]

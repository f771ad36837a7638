"""Off-policy policy-gradient surrogates: the Reactor's beta-LOO and ACER's truncated IS.

Each function returns a per-step *loss* ``[T, B]`` (minimise it): a surrogate whose
gradient with respect to the policy logits is minus the estimate ``G`` below. Every weight
in it (``beta``, ``R``, ``Q``, ``mu``, the truncated ratios) is a constant; only ``pi``
carries gradient. ``R`` is the Retrace estimate of ``Q^pi(x_t, a_t)`` (the expected-value
target, or the mean of the distributional one); ``Q`` is the critic's estimate for every
action. Masking, burn-in and averaging over steps are the caller's.

beta-LOO (Gruslys et al. 2018, eq. 10) ::

    G = beta (R - Q(x, A)) grad pi(A|x) + sum_a Q(x, a) grad pi(a|x)
    beta = min(c, 1 / mu(A|x)),   c >= 1

``c = 1`` gives ``beta = 1``, the leave-one-out estimate the paper's results use; a large
``c`` approaches the unbiased ``1 / mu`` (then the first term is
``pi/mu (R - Q(A)) grad log pi(A)``). Since ``grad pi = pi grad log pi`` the surrogate is
``-[beta (R - Q(A)) pi(A) + sum_a Q(a) pi(a)]``.

Truncated importance sampling with bias correction (Wang et al. 2017, ACER eq. 9) ::

    G = min(c, rho(A)) (R - V) grad log pi(A)
        + sum_a [pi(a) - c mu(a)]_+ (Q(a) - V) grad log pi(a)
    rho(a) = pi(a) / mu(a),   V = sum_a pi(a) Q(a)

(``[pi - c mu]_+ = pi [1 - c / rho]_+``: ACER's correction term, written so that
``mu(a) = 0`` needs no division). It needs the whole behaviour distribution ``mu(.|x)``.

Demonstrations. A demo step stores ``mu(a|x) = 1`` for the recorded action ``A`` (and 0 for
the others): the learner treats the demonstrator as a deterministic behaviour policy.
* beta-LOO: ``beta = min(c, 1 / 1) = 1``, which *is* ``1 / mu(A)``, so the term of the
  demonstrated action is importance-corrected exactly,
  ``G = (R - Q(A)) grad pi(A) + sum_a Q(a) grad pi(a)``; the actions the demonstrator never
  takes are valued by the critic alone (Proposition 1's bias ``sum_{a != A} grad pi(a)
  (Q(a) - Q^pi(a))``, which no data can remove).
* TIS: ``rho(A) = pi(A) <= 1``, so ``min(c, rho) = pi(A)`` and ``[pi(A) - c]_+ = 0``, while
  every other action gets ``[pi(a) - 0]_+ = pi(a)``:
  ``G = pi(A) (R - V) grad log pi(A) + sum_{a != A} pi(a) (Q(a) - V) grad log pi(a)``,
  the all-action gradient with the Retrace return in place of ``Q(A)``.
"""

from __future__ import annotations

import torch


def _gather(x: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
    return x.gather(-1, action.long().unsqueeze(-1)).squeeze(-1)


def loo_beta(mu_taken: torch.Tensor, clip: float) -> torch.Tensor:
    """``beta = min(clip, 1 / mu(A|x))`` ``[T, B]``; ``clip = 1`` gives beta = 1."""
    if clip < 1.0:
        raise ValueError(f"expected a beta clip c >= 1 (beta = min(c, 1/mu)), got {clip}")
    return 1.0 / mu_taken.clamp_min(1.0 / clip)


def beta_loo_loss(
    logits: torch.Tensor,
    action: torch.Tensor,
    mu_taken: torch.Tensor,
    returns: torch.Tensor,
    q: torch.Tensor,
    beta_clip: float = 1.0,
) -> torch.Tensor:
    """beta-LOO surrogate loss ``[T, B]``.

    ``logits``: ``[T, B, A]`` policy logits (with gradient); ``action``: ``[T, B]`` taken
    action; ``mu_taken``: ``[T, B]`` its behaviour probability (1 on demo steps);
    ``returns``: ``[T, B]`` Retrace estimate ``R``; ``q``: ``[T, B, A]`` critic values.
    """
    pi = torch.softmax(logits, dim=-1)
    beta = loo_beta(mu_taken.detach(), beta_clip)
    q = q.detach()
    advantage = returns.detach() - _gather(q, action)
    return -(beta * advantage * _gather(pi, action) + (q * pi).sum(-1))


def tis_loss(
    logits: torch.Tensor,
    action: torch.Tensor,
    mu: torch.Tensor,
    returns: torch.Tensor,
    q: torch.Tensor,
    clip: float = 10.0,
) -> torch.Tensor:
    """ACER's truncated importance sampling with bias correction, surrogate loss ``[T, B]``.

    ``logits``: ``[T, B, A]`` (with gradient); ``action``: ``[T, B]``; ``mu``: ``[T, B, A]``
    the full behaviour distribution (one-hot on demo steps); ``returns``: ``[T, B]``
    Retrace ``R``; ``q``: ``[T, B, A]`` critic values; ``clip``: ACER's ``c`` (10 there).
    """
    if clip <= 0.0:
        raise ValueError(f"expected a truncation c > 0, got {clip}")
    log_pi = torch.log_softmax(logits, dim=-1)
    pi = log_pi.exp().detach()
    q = q.detach()
    mu = mu.detach()
    value = (pi * q).sum(-1)
    mu_taken = _gather(mu, action).clamp_min(torch.finfo(mu.dtype).tiny)
    rho_bar = (_gather(pi, action) / mu_taken).clamp(max=clip)
    taken = rho_bar * (returns.detach() - value) * _gather(log_pi, action)
    correction = ((pi - clip * mu).clamp_min(0.0) * (q - value.unsqueeze(-1)) * log_pi).sum(-1)
    return -(taken + correction)


def entropy(logits: torch.Tensor) -> torch.Tensor:
    """Policy entropy ``H(pi) = -sum_a pi(a) log pi(a)`` ``[T, B]`` (with gradient); the
    loss subtracts ``entropy_weight * H``."""
    log_pi = torch.log_softmax(logits, dim=-1)
    return -(log_pi.exp() * log_pi).sum(-1)


__all__ = ["beta_loo_loss", "entropy", "loo_beta", "tis_loss"]

"""The whole Reactor loss on a tiny chain MDP with tabular networks: learning off-policy from
a uniform behaviour policy plus demo episodes (mu = 1), every critic/actor variant finds the
optimal policy and the critic approaches Q*."""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest
import torch
from torch import nn

from agents.core.policy import mixture_log_probs
from agents.reactor.acting import demo_behaviour
from agents.reactor.config import ReactorLossConfig
from agents.reactor.distributional import atoms
from agents.reactor.loss import ReactorLossInputs, reactor_loss
from agents.reactor.trust_region import polyak_update_

S, A, GAMMA, LENGTH = 4, 2, 0.9, 6  # chain states 0..3; actions 0 = left, 1 = right
PAD = S  # observation index of padding
# right from 3 ends with reward 1; left from 0 ends with reward 0.1 (a tempting early exit)
Q_STAR_RIGHT = np.array([GAMMA**3, GAMMA**2, GAMMA, 1.0])


def step(s: int, a: int) -> tuple[int, float, bool]:
    if a == 1:
        return (s + 1, 0.0, False) if s < S - 1 else (PAD, 1.0, True)
    return (s - 1, 0.0, False) if s > 0 else (PAD, 0.1, True)


def episodes(rng: np.random.Generator, n: int, demo: bool) -> list[dict[str, np.ndarray]]:
    """Episodes of at most 12 steps: uniform behaviour (mu = 0.5), or the demonstrator
    (always right, stored with mu = one-hot)."""
    out = []
    for _ in range(n):
        s, obs, act, rew, term, mu = 0, [0], [], [], [], []
        for _ in range(12):
            a = 1 if demo else int(rng.integers(A))
            s, r, done = step(s, a)
            obs.append(s)
            act.append(a)
            rew.append(r)
            term.append(done)
            mu.append(np.eye(A)[a] if demo else np.full(A, 0.5))
            if done:
                break
        out.append(dict(obs=np.array(obs), act=np.array(act), rew=np.array(rew),
                        term=np.array(term, float), mu=np.array(mu)))  # fmt: skip
    return out


def sequences(eps: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Cut like agents.core.sequences (ZERO_PAD): LENGTH positions every LENGTH - 1 steps."""
    rows = []
    for e in eps:
        n = len(e["act"])
        for start in range(0, n, LENGTH - 1):
            row = dict(obs=np.full(LENGTH, PAD), act=np.zeros(LENGTH, int), rew=np.zeros(LENGTH),
                       term=np.zeros(LENGTH), mask=np.zeros(LENGTH, bool),
                       mu=np.full((LENGTH, A), 1.0 / A))  # fmt: skip
            no = min(LENGTH, n + 1 - start)
            na = min(LENGTH - 1, n - start)
            row["obs"][:no] = e["obs"][start : start + no]
            for k in ("act", "rew", "term", "mu"):
                row[k][:na] = e[k][start : start + na]
            row["mask"][:na] = True
            rows.append(row)
    return {k: np.stack([r[k] for r in rows], 1) for k in rows[0]}  # time-major [T, B, ...]


class Tabular(nn.Module):
    def __init__(self, cfg: ReactorLossConfig):
        super().__init__()
        atoms_shape = (cfg.num_atoms,) if cfg.distributional else ()
        self.policy = nn.Parameter(torch.zeros(S + 1, A))
        self.critic = nn.Parameter(torch.zeros(S + 1, A, *atoms_shape))


CONFIGS = {
    "distributional beta-LOO": {},
    "expected beta-LOO": dict(distributional=False),
    "distributional TIS": dict(policy_gradient="tis"),
    "beta-LOO c=2 trust region": dict(beta_clip=2.0, trust_region=True, trust_region_delta=0.1),
}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_reactor_loss_learns_the_chain(name):
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    cfg = ReactorLossConfig(num_atoms=31, v_min=-0.5, v_max=1.5, entropy_weight=1e-3,
                            average_tau=0.9, **CONFIGS[name])  # fmt: skip
    cfg.validate()
    data = sequences(episodes(rng, 60, demo=False) + episodes(rng, 5, demo=True))
    data = {k: torch.as_tensor(v) for k, v in data.items()}
    n_seq = data["obs"].shape[1]
    net = Tabular(cfg)
    target, average = copy.deepcopy(net), copy.deepcopy(net)
    opt = torch.optim.Adam(net.parameters(), lr=0.05)
    for update in range(300):
        idx = torch.as_tensor(rng.integers(0, n_seq, size=16))
        obs = data["obs"][:, idx]
        mu = data["mu"][:, idx].float()
        inputs = ReactorLossInputs(
            policy_logits=net.policy[obs],
            critic=net.critic[obs],
            target_critic=target.critic[obs].detach(),
            average_logits=average.policy[obs].detach(),
            action=data["act"][:, idx],
            reward=data["rew"][:, idx].float(),
            terminal=data["term"][:, idx].float(),
            mask=data["mask"][:, idx],
            mu_taken=mu.gather(-1, data["act"][:, idx, None]).squeeze(-1),
            mu=mu,
            weight=torch.ones(16),
        )
        out = reactor_loss(inputs, cfg, GAMMA)
        opt.zero_grad()
        out.loss.backward()
        opt.step()
        polyak_update_(average, net, cfg.average_tau)
        if update % 10 == 9:
            target.load_state_dict(net.state_dict())
    assert out.priority[~out.learn_mask].abs().sum() == 0
    pi = torch.softmax(net.policy.detach()[:S], -1)
    assert bool((pi[:, 1] > 0.9).all()), f"pi(right|s) = {pi[:, 1].tolist()}"
    q = net.critic.detach()[:S]
    if cfg.distributional:
        z = atoms(cfg.num_atoms, cfg.v_min, cfg.v_max)
        q = (torch.softmax(q, -1) * z).sum(-1)
    np.testing.assert_allclose(q[:, 1].numpy(), Q_STAR_RIGHT, atol=0.1)


def test_behaviour_probabilities():
    logits = torch.tensor([[0.0, float(np.log(3.0))]])
    torch.testing.assert_close(mixture_log_probs(logits, 0.0).exp(), torch.tensor([[0.25, 0.75]]))
    torch.testing.assert_close(mixture_log_probs(logits, 0.2).exp(), torch.tensor([[0.3, 0.7]]))
    torch.testing.assert_close(demo_behaviour(torch.tensor([1, 0]), 2), torch.eye(2)[[1, 0]])


def test_reactor_loss_checks_its_inputs():
    cfg = ReactorLossConfig()
    x = ReactorLossInputs(
        policy_logits=torch.zeros(3, 1, 2), critic=torch.zeros(3, 1, 2),
        target_critic=torch.zeros(3, 1, 2), average_logits=None,
        action=torch.zeros(3, 1, dtype=torch.long), reward=torch.zeros(3, 1),
        terminal=torch.zeros(3, 1), mask=torch.ones(3, 1, dtype=torch.bool),
        mu_taken=torch.ones(3, 1), mu=None, weight=torch.ones(1),
    )  # fmt: skip
    with pytest.raises(ValueError, match=r"expected a \[T, B, A, N\] critic"):
        reactor_loss(x, cfg, 0.9)
    with pytest.raises(ValueError, match="average_logits"):
        reactor_loss(x, dataclasses.replace(cfg, distributional=False, trust_region=True), 0.9)
    with pytest.raises(ValueError, match="for TIS"):
        reactor_loss(x, dataclasses.replace(cfg, distributional=False, policy_gradient="tis"), 0.9)

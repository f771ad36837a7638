"""R2D3's optional large-margin term: DQfD's classification loss on the demo steps only,
added to R2D2's TD loss; the priorities stay the TD errors."""

from __future__ import annotations

import torch

from agents.core.batch import TorchBatch
from agents.core.losses import large_margin_loss
from agents.core.networks import LSTMState, RecurrentQNetwork
from agents.core.preprocess import Leaf
from agents.r2d2.learning import r2d2_loss
from agents.r2d3 import R2D3, R2D3Config

T, B, A = 6, 4, 3


class View:
    def __init__(self, cfg):
        torch.manual_seed(0)
        self.cfg = cfg
        self.networks = {"main": RecurrentQNetwork({"x": Leaf("vector", (2,))}, A, 8, 8)}
        self.targets = {"main": RecurrentQNetwork({"x": Leaf("vector", (2,))}, A, 8, 8)}
        self.device = torch.device("cpu")

    network = property(lambda self: self.networks["main"])
    target = property(lambda self: self.targets["main"])


def batch(is_demo: list[bool]) -> TorchBatch:
    g = torch.Generator().manual_seed(1)
    mask = torch.ones(T, B, dtype=torch.bool)
    mask[-1] = False
    zeros = torch.zeros(B, 8)
    return TorchBatch(
        obs={"x": torch.randn(T, B, 2, generator=g)},
        prev_action=torch.randint(0, A, (T, B), generator=g),
        prev_reward=torch.zeros(T, B),
        action=torch.randint(0, A, (T, B), generator=g),
        reward=torch.randn(T, B, generator=g),
        terminal=torch.zeros(T, B),
        mask=mask,
        state=LSTMState(zeros, zeros.clone()),
        weight=torch.ones(B),
        source=torch.tensor(is_demo).long(),
        is_demo=torch.tensor(is_demo),
        extras={},
    )


def test_margin_term_is_added_on_demo_steps_only():
    cfg = R2D3Config(demos=("x",), burn_in=0, n_step=2)
    view, b = View(cfg), batch([True, False, True, False])
    plain = r2d2_loss(view, b, cfg)
    with_margin = r2d2_loss(view, b, cfg, margin_weight=0.5, margin=0.8)
    q = view.network(b.obs, b.prev_action, b.prev_reward, b.state).q
    gap = large_margin_loss(q, b.action, 0.8) * b.mask * b.is_demo.unsqueeze(0)
    extra = (0.5 * gap.sum(0) / b.mask.sum(0)).mean()
    assert torch.allclose(with_margin.loss, plain.loss + extra, atol=1e-6)
    assert torch.equal(with_margin.td_abs, plain.td_abs)  # priorities: TD errors only
    assert with_margin.metrics["loss_margin"] > 0
    # no demo element: no margin
    none = batch([False] * B)
    assert torch.allclose(r2d2_loss(view, none, cfg, 0.5).loss, r2d2_loss(view, none, cfg).loss)


def test_r2d3_uses_its_config_weights():
    cfg = R2D3Config(demos=("x",), burn_in=0, n_step=2, lambda_margin=0.25, margin=0.5)
    loss = R2D3(cfg).loss()
    view, b = View(cfg), batch([True, True, False, False])
    assert torch.allclose(loss(view, b).loss, r2d2_loss(view, b, cfg, 0.25, 0.5).loss)
    off = R2D3(R2D3Config(demos=("x",), burn_in=0, n_step=2, lambda_margin=0.0)).loss()
    assert torch.allclose(off(view, b).loss, r2d2_loss(view, b, cfg).loss)


def test_margin_default_per_observation_space():
    from agents.core.agent import EnvInfo
    from agents.core.preprocess import make_preprocessor
    from demostudio.episode import make_env

    def settled(env_id: str, **kw) -> float:
        env = make_env(env_id)
        agent = R2D3(R2D3Config(demos=("x",), env=env_id, **kw))
        agent.configure(EnvInfo(env_id, env, make_preprocessor(env.observation_space)))
        env.close()
        return agent.cfg.lambda_margin

    assert settled("MountainCar-v0") == 0.0  # vector observations
    assert settled("MiniGrid-DoorKey-5x5-v0") == 1.0  # a grid leaf
    assert settled("MiniGrid-DoorKey-5x5-v0", lambda_margin=0.0) == 0.0  # a given value wins
    assert settled("MountainCar-v0", lambda_margin=0.5) == 0.5

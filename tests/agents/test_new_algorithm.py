"""A new algorithm written in this file alone, against the core: expected SARSA on R2D2's
recurrent Q network (its config composed from the core's groups, its loss from the core's
pieces), registered without touching any file in agents/. It trains through the run
shell on a trivial env, learns it, and restores from its checkpoint as any algorithm does.

What a new algorithm is, here and in agents/<name>/: a config, a loss, an Agent subclass
(here extending R2D2, so only ``loss`` differs), and one registry line."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import gymnasium as gym
import numpy as np
import pytest
import torch

from agents import registry
from agents.core.batch import LearnerView, Loss, LossOutput, TorchBatch
from agents.core.config import ReplayAgentConfig
from agents.core.logger import read_metrics
from agents.core.losses import learn_mask, n_step_targets, q_values
from agents.core.restore import restore_agent
from agents.r2d2 import R2D2

# --- the algorithm ---------------------------------------------------------------------------


@dataclass
class ExpectedSARSAConfig(ReplayAgentConfig):
    """Expected SARSA: R2D2's network, replay and actors; the target is the value of the
    next observation under the epsilon-greedy policy, not its greedy action's."""

    target_epsilon: float = 0.05
    """Epsilon of the policy whose expected value the target takes."""


def expected_sarsa_loss(
    learner: LearnerView, batch: TorchBatch, cfg: ExpectedSARSAConfig
) -> LossOutput:
    """n-step targets bootstrapped with E_pi[Q_target(s, .)], pi epsilon-greedy on Q."""
    q_online, q_target = q_values(learner, batch, cfg.burn_in)  # [T, B, A]
    actions = q_online.shape[-1]
    pi = torch.full_like(q_online, cfg.target_epsilon / actions)
    pi.scatter_add_(-1, q_online.argmax(-1, keepdim=True),
                    torch.full_like(q_online[..., :1], 1.0 - cfg.target_epsilon))  # fmt: skip
    bootstrap = (pi.detach() * q_target).sum(-1)
    eps = cfg.rescale_eps if cfg.value_rescaling else None
    target = n_step_targets(batch.reward, batch.terminal, batch.mask, bootstrap, cfg.discount,
                            cfg.n_step, eps)  # fmt: skip
    q_taken = q_online.gather(-1, batch.action.unsqueeze(-1)).squeeze(-1)
    learn = learn_mask(batch, cfg.burn_in)
    td = (target.detach() - q_taken) * learn
    loss = ((0.5 * td**2).sum(0) / learn.sum(0).clamp(min=1) * batch.weight).mean()
    return LossOutput(loss, td.detach().abs(), learn, {"loss": float(loss.detach())})


class ExpectedSARSA(R2D2):
    name = "expected-sarsa"
    config_cls = ExpectedSARSAConfig

    def loss(self) -> Loss:
        return partial(expected_sarsa_loss, cfg=self.cfg)


# --- a trivial env: say the signal you see ----------------------------------------------------


class SaySignal(gym.Env):
    """Each step shows a random signal, 0 or 1 (one-hot); acting it earns 1. Ten steps."""

    observation_space = gym.spaces.Box(0.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)
    LENGTH = 10

    def _show(self) -> np.ndarray:
        self.signal = int(self.np_random.integers(2))
        return np.eye(2, dtype=np.float32)[self.signal]

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self._show(), {}

    def step(self, action):
        reward = float(int(action) == self.signal)
        self.t += 1
        return self._show(), reward, False, self.t >= self.LENGTH, {}


ENV_ID = "DemoStudioTest/SaySignal-v0"


@pytest.fixture
def registered(monkeypatch):
    """The algorithm in the registry and the env in Gymnasium's, for this test only."""
    monkeypatch.setattr(registry, "_ENTRIES", dict(registry._ENTRIES))
    summary = "expected SARSA on R2D2's network (a test's algorithm)"
    registry.register_algorithm("expected-sarsa", __name__, "ExpectedSARSA", summary)
    if ENV_ID not in gym.registry:
        gym.register(ENV_ID, entry_point=SaySignal)
    yield registry.get_algorithm("expected-sarsa")
    gym.registry.pop(ENV_ID, None)


def test_an_algorithm_added_outside_agents_trains_learns_and_restores(registered, tmp_path):
    assert "expected-sarsa" in registry.algorithm_names()
    cfg = registered.config_cls(
        env=ENV_ID, seed=0, hidden=16, lstm=16, num_actors=2, burn_in=0, trace=5, period=5,
        n_step=1, batch_size=16, min_replay=8, total_env_steps=800, eval_every=400,
        eval_episodes=4, eval_epsilon=0.0, checkpoint_every=400, learning_rate=3e-3,
        progress=False, tensorboard=False, device="cpu", run_dir=tmp_path / "run",
    )  # fmt: skip
    result = registered.train(cfg)
    assert result.env_steps >= 800 and result.updates >= 150
    # it learned the env: a random policy says 5 of 10 signals, the trained one all of them
    assert result.evals[-1][1] >= 9.5 and result.evals[0][1] < result.evals[-1][1]
    losses = [r["loss"] for r in read_metrics(tmp_path / "run") if r["kind"] == "train"]
    assert losses and all(np.isfinite(losses))
    restored = restore_agent(tmp_path / "run" / "checkpoints" / "final.pt", seed=0)
    assert restored.algo == "expected-sarsa" and restored.counters["env_steps"] == result.env_steps
    env = gym.make(ENV_ID)
    obs, info = env.reset(seed=1)
    restored.controller.reset(env, obs, info)
    said = [restored.controller.act(env, obs)]
    for _ in range(9):
        obs, *_ = env.step(said[-1])
        said.append(restored.controller.act(env, obs))
    assert len(said) == 10

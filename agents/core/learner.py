"""The recurrent learner: burn-in + unroll of online and target networks, a pluggable loss,
Adam, gradient clipping, target network copied every K updates, priorities returned."""

from __future__ import annotations

import copy
from typing import NamedTuple, Protocol

import numpy as np
import torch

from agents.core.losses import LossFn, r2d2_loss
from agents.core.mixing import MixedSample
from agents.core.networks import LSTMState, RecurrentQNetwork


class LearnerSettings(Protocol):
    """The config fields the learner reads (any algorithm config built on the core has them)."""

    burn_in: int
    discount: float
    n_step: int
    value_rescaling: bool
    rescale_eps: float
    learning_rate: float
    adam_eps: float
    max_grad_norm: float
    target_update_every: int


class TorchBatch(NamedTuple):
    """A sampled batch on the learner's device, time-major ``[T, B, ...]``."""

    obs: dict[str, torch.Tensor]
    prev_action: torch.Tensor
    prev_reward: torch.Tensor
    action: torch.Tensor
    reward: torch.Tensor
    terminal: torch.Tensor
    mask: torch.Tensor
    state: LSTMState
    weight: torch.Tensor
    """``[B]`` importance weights."""
    source: torch.Tensor
    """``[B]`` which buffer each element came from (0 = agent replay)."""


def to_torch(sample: MixedSample, device: torch.device) -> TorchBatch:
    b = sample.batch

    def tm(x: np.ndarray) -> torch.Tensor:  # [B, L, ...] -> [L, B, ...]
        return torch.from_numpy(np.ascontiguousarray(np.swapaxes(x, 0, 1))).to(device)

    return TorchBatch(
        obs={k: tm(v) for k, v in b.obs.items()},
        prev_action=tm(b.prev_action),
        prev_reward=tm(b.prev_reward),
        action=tm(b.action),
        reward=tm(b.reward),
        terminal=tm(b.terminal),
        mask=tm(b.mask),
        state=LSTMState(torch.from_numpy(b.h0).to(device), torch.from_numpy(b.c0).to(device)),
        weight=torch.from_numpy(sample.weight).to(device),
        source=torch.from_numpy(sample.source).to(device),
    )


class Learner:
    def __init__(
        self,
        network: RecurrentQNetwork,
        cfg: LearnerSettings,
        device: torch.device,
        loss_fn: LossFn = r2d2_loss,
    ):
        self.cfg = cfg
        self.device = device
        self.network = network.to(device)
        self.target = copy.deepcopy(self.network).requires_grad_(False)
        self.loss_fn = loss_fn
        self.optimizer = torch.optim.Adam(
            self.network.parameters(), lr=cfg.learning_rate, eps=cfg.adam_eps
        )
        self.updates = 0

    def unroll(self, batch: TorchBatch) -> tuple[torch.Tensor, torch.Tensor]:
        """Online and target Q ``[T, B, A]`` over the whole sequence, both starting from the
        stored state; the burn-in part of the online unroll carries no gradient."""
        burn = self.cfg.burn_in

        def part(x: torch.Tensor | dict, lo: int, hi: int | None):
            if isinstance(x, dict):
                return {k: v[lo:hi] for k, v in x.items()}
            return x[lo:hi]

        with torch.no_grad():
            q_target = self.target(batch.obs, batch.prev_action, batch.prev_reward, batch.state).q
            state = batch.state
            q_burn = None
            if burn > 0:
                out = self.network(
                    part(batch.obs, 0, burn),
                    batch.prev_action[:burn],
                    batch.prev_reward[:burn],
                    state,
                )
                q_burn, state = out.q, out.state
        q_rest = self.network(
            part(batch.obs, burn, None), batch.prev_action[burn:], batch.prev_reward[burn:], state
        ).q
        q_online = q_rest if q_burn is None else torch.cat([q_burn, q_rest], dim=0)
        return q_online, q_target

    def update(self, sample: MixedSample) -> tuple[dict[str, float], np.ndarray, np.ndarray]:
        """One gradient step; returns metrics and ``[B, T]`` |TD| and learned mask (numpy)."""
        batch = to_torch(sample, self.device)
        out = self.loss_fn(self, batch)
        self.optimizer.zero_grad(set_to_none=True)
        out.loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(
            self.network.parameters(), self.cfg.max_grad_norm
        )
        self.optimizer.step()
        self.updates += 1
        if self.updates % self.cfg.target_update_every == 0:
            self.sync_target()
        metrics = dict(out.metrics, grad_norm=float(grad_norm))
        td = out.td_abs.T.cpu().numpy()
        mask = out.learn_mask.T.cpu().numpy()
        return metrics, td, mask

    def sync_target(self) -> None:
        self.target.load_state_dict(self.network.state_dict())

    def state_dict(self) -> dict:
        return {
            "network": self.network.state_dict(),
            "target": self.target.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "updates": self.updates,
        }

    def load_state_dict(self, state: dict) -> None:
        self.network.load_state_dict(state["network"])
        self.target.load_state_dict(state["target"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.updates = int(state["updates"])


__all__ = ["Learner", "LearnerSettings", "TorchBatch", "to_torch"]

"""DQfD: a permanent demo replay whose share of each batch follows the priorities (demo
bonus epsilon_d vs agent bonus epsilon_a), DQfD's loss, and two phases: pre-training on
demos only (no env is touched; ends with ``pretrained.pt`` and an evaluation), then
interaction at the replay ratio."""

from __future__ import annotations

from agents.core.agent import Phase
from agents.core.batch import Loss
from agents.core.context import RunContext
from agents.core.demo_buffer import DemoReplaySpec, build_demo_replay
from agents.core.mixing import DataSource
from agents.core.replay import PrioritizedSequenceReplay
from agents.core.run import TrainResult, train
from agents.core.schedules import Offline
from agents.dqfd.config import DQfDConfig
from agents.dqfd.learning import DQfDLoss
from agents.r2d2.agent import R2D2

PRETRAINED_NAME = "pretrained.pt"
"""Checkpoint written in run_dir/checkpoints when pre-training ends."""
DEMO_SOURCE = "demo replay"


class PriorityShare:
    """The demo replay's share of the summed priorities of both replays: sampling each
    element from the demo replay with this probability is sampling ONE prioritized replay
    holding both, so the demo share adjusts itself as priorities change."""

    def __init__(self, demo: PrioritizedSequenceReplay, agent: PrioritizedSequenceReplay):
        self.demo = demo
        self.agent = agent

    def __call__(self, _step: float) -> float:
        total = self.demo.tree.total + self.agent.tree.total
        return self.demo.tree.total / total if total > 0 else 0.0


class DQfD(R2D2):
    name = "dqfd"
    config_cls = DQfDConfig

    def loss(self) -> Loss:
        return DQfDLoss(self.cfg)

    def sources(self, ctx: RunContext) -> list[DataSource]:
        """The demo replay, drawn from with its share of both replays' priorities."""
        demos = build_demo_replay(DemoReplaySpec.of(self.cfg), ctx)
        return [DataSource(DEMO_SOURCE, demos, PriorityShare(demos, ctx.replay), demo=True)]

    def phases(self) -> list[Phase]:
        cfg = self.cfg
        pretrain = Phase(
            "pretrain",
            Offline(cfg.pretrain_updates, cfg.batch_size),
            log_kind="pretrain",
            log_every=cfg.pretrain_log_every,
            end_checkpoint=PRETRAINED_NAME,
            eval_at_end=True,
        )
        return ([pretrain] if cfg.pretrain_updates else []) + super().phases()

    def metrics(self, ctx: RunContext) -> dict[str, float]:
        return {"demo_priority_share": float(ctx.mix.source(DEMO_SOURCE).ratio(0))}


def train_dqfd(cfg: DQfDConfig) -> TrainResult:
    return train(DQfD(cfg))


__all__ = ["PRETRAINED_NAME", "DQfD", "PriorityShare", "train_dqfd"]

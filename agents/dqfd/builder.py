"""DQfD wiring: the core trainer with a permanent demo replay whose share of each batch
follows the priorities (demo bonus epsilon_d vs agent bonus epsilon_a), DQfD's loss, and a
pre-training phase on demos only run before the actors touch an env."""

from __future__ import annotations

from agents.core.algorithm import Algorithm
from agents.core.checkpoint import save_checkpoint
from agents.core.demos import build_demo_replay
from agents.core.logger import RunLogger
from agents.core.mixing import MixSource, ReplayMix
from agents.core.replay import PrioritizedSequenceReplay
from agents.core.trainer import (
    TrainContext,
    TrainResult,
    checkpoint_payload,
    evaluate_network,
    train,
)
from agents.dqfd.config import DQfDConfig
from agents.dqfd.learning import DQfDLoss
from agents.dqfd.pretrain import pretrain

PRETRAINED_NAME = "pretrained.pt"
"""Checkpoint written in run_dir/checkpoints when pre-training ends."""


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


class DQfD(Algorithm):
    name = "dqfd"

    def __init__(self, cfg: DQfDConfig):
        self.cfg = cfg
        self.loss_fn = DQfDLoss(cfg, demo_sources=(1,))
        self.demo_buffer: PrioritizedSequenceReplay | None = None
        self.share: PriorityShare | None = None

    def extra_sources(self, ctx: TrainContext) -> list[MixSource]:
        cfg = self.cfg
        self.demo_buffer = build_demo_replay(cfg, ctx)
        self.share = PriorityShare(self.demo_buffer, ctx.replay)
        self.loss_fn.buffers = [ctx.replay, self.demo_buffer]
        sources = [MixSource(self.demo_buffer, self.share)]
        if ctx.learner.updates < cfg.pretrain_updates:  # not on a resumed, pre-trained run
            self.pretrain(ctx, ReplayMix(ctx.replay, sources, seed=cfg.seed + 3))
        return sources

    def pretrain(self, ctx: TrainContext, mix: ReplayMix) -> None:
        """Updates on demos only (no env is reset or stepped), logged as ``pretrain`` rows at
        env step 0, then an evaluation at env step 0 and a ``pretrained.pt`` checkpoint."""
        cfg = self.cfg
        logger = RunLogger(ctx.run_dir, cfg.tensorboard)
        try:
            pretrain(
                ctx.learner,
                mix,
                cfg.pretrain_updates - ctx.learner.updates,
                cfg.batch_size,
                lambda m: logger.log("pretrain", 0, updates=ctx.learner.updates, **m),
                cfg.pretrain_log_every,
                cfg.progress,
            )
            counters = {"env_steps": 0, "updates": ctx.learner.updates, "episodes": 0}
            save_checkpoint(
                ctx.run_dir / "checkpoints" / PRETRAINED_NAME,
                checkpoint_payload(self, ctx, counters),
            )
            if cfg.eval_every:
                result = evaluate_network(ctx, cfg.eval_episodes, seed=cfg.seed + 10_000)
                logger.log(
                    "eval",
                    0,
                    eval_return=result.mean,
                    eval_success=result.success_rate,
                    updates=ctx.learner.updates,
                )
                if cfg.progress:
                    print(f"after pre-training: eval mean return {result.mean:.2f}")
        finally:
            logger.close()

    def metrics(self, ctx: TrainContext, env_steps: int) -> dict[str, float]:
        return {"demo_priority_share": self.share(env_steps)} if self.share else {}


def train_dqfd(cfg: DQfDConfig) -> TrainResult:
    return train(cfg, DQfD(cfg))


__all__ = ["DQfD", "PriorityShare", "train_dqfd"]

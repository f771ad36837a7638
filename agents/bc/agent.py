"""Behaviour cloning: a ``logits`` head trained offline by cross-entropy on demo sequences
(a split of whole episodes held out for validation), early stopping on the validation loss
with the best weights kept, evaluated in the env by the run shell. BC never steps an env to
learn: its clock is updates and its metrics rows carry ``env_steps`` 0."""

from __future__ import annotations

import copy
from functools import partial
from typing import Any

import numpy as np

from agents.bc.config import BCConfig
from agents.bc.learning import HEAD, bc_learner_loss
from agents.bc.split import DemoSplit, EarlyStopping, split_episodes
from agents.bc.validate import validation_loss
from agents.core.agent import Agent, Phase
from agents.core.batch import Loss
from agents.core.context import RunContext
from agents.core.demos import DemoFiles, DemoSet, context_demos, demo_sequences
from agents.core.mixing import DataSource, ReplayMix
from agents.core.networks import HeadSpec
from agents.core.policy import EpsilonGreedy, Selector
from agents.core.replay import PrioritizedSequenceReplay
from agents.core.run import TrainResult, train
from agents.core.schedules import Offline
from agents.core.sequences import EndBehavior, SequenceBatch


class BC(Agent):
    name = "bc"
    config_cls = BCConfig
    uses_replay = False
    final_eval_always = True

    def __init__(self, cfg: BCConfig):
        super().__init__(cfg)
        self.split: DemoSplit | None = None
        self.val_seqs: SequenceBatch | None = None
        self.stopper = EarlyStopping(0)
        self.best_state: dict[str, Any] | None = None
        self.stopped_early = False

    def heads(self) -> dict[str, HeadSpec]:
        return {HEAD: HeadSpec("logits")}

    def loss(self) -> Loss:
        return partial(bc_learner_loss, burn_in=self.cfg.burn_in)

    def acting_selector(self, n: int) -> Selector:
        return EpsilonGreedy(np.zeros(n), head=HEAD)

    def cut(self, ctx: RunContext, demos: DemoSet) -> SequenceBatch:
        """Sequences of ``demos`` with stored LSTM states from the current network."""
        cfg = self.cfg
        return demo_sequences(
            demos, ctx.preprocess, ctx.network, cfg.sequence_length, cfg.period,
            EndBehavior(cfg.end_behavior), ctx.device, burn_in=cfg.burn_in,
        )  # fmt: skip

    def train_source(self, ctx: RunContext) -> DataSource:
        """Uniform sampling (alpha 0) over the training episodes' sequences."""
        seqs = self.cut(ctx, self.split.train)
        seed = self.cfg.seed + ctx.learner.updates
        buf = PrioritizedSequenceReplay(len(seqs), 0.0, 0.0, seed=seed, name="demos")
        buf.add(seqs)
        return DataSource("demos", buf, demo=True)

    def sources(self, ctx: RunContext) -> list[DataSource]:
        demos = context_demos(DemoFiles.of(self.cfg), ctx)
        self.split = split_episodes(demos, self.cfg.val_fraction, self.cfg.seed)
        self.val_seqs = self.cut(ctx, self.split.val) if self.split.val.paths else None
        self.stopper = EarlyStopping(
            self.cfg.patience if self.val_seqs is not None else 0, self.cfg.min_delta
        )
        self.best_state = copy.deepcopy(ctx.network.state_dict())
        return [self.train_source(ctx)]

    def phases(self) -> list[Phase]:
        cfg = self.cfg
        schedule = Offline(cfg.max_updates, cfg.batch_size)
        return [Phase("train", schedule, log_every=cfg.val_every, eval_every=cfg.eval_every)]

    def start(self, ctx: RunContext) -> None:
        s = self.split
        ctx.logger.log(
            "split", 0, train_episodes=len(s.train.paths), val_episodes=len(s.val.paths),
            train_steps=s.train.steps, val_steps=s.val.steps,
        )  # fmt: skip

    def after_iteration(self, ctx: RunContext) -> bool:
        cfg, u = self.cfg, ctx.learner.updates
        if cfg.recurrent and cfg.state_refresh_every and u % cfg.state_refresh_every == 0:
            ctx.mix = ReplayMix(self.train_source(ctx), seed=cfg.seed + 1)  # fresh states
            if self.val_seqs is not None:
                self.val_seqs = self.cut(ctx, self.split.val)
        if u % cfg.val_every or self.val_seqs is None:
            return False
        val_loss, val_acc = validation_loss(ctx, self.val_seqs, cfg.burn_in)
        if self.stopper.update(val_loss):
            self.best_state = copy.deepcopy(ctx.network.state_dict())
        ctx.logger.log("val", 0, tb_step=u, updates=u, val_loss=val_loss, val_accuracy=val_acc,
                       best_val_loss=self.stopper.best)  # fmt: skip
        self.stopped_early = self.stopper.should_stop
        return self.stopped_early

    def finish(self, ctx: RunContext) -> None:
        """Keep the weights with the best validation loss (the last ones without one)."""
        if self.val_seqs is not None:
            ctx.network.load_state_dict(self.best_state)

    def eval_metrics(self, ctx: RunContext) -> dict[str, float]:
        return {"best_val_loss": self.stopper.best, "stopped_early": float(self.stopped_early)}


def train_bc(cfg: BCConfig) -> TrainResult:
    """Train on the demos until early stopping (or ``max_updates``), keep the weights with
    the best validation loss, evaluate them in the env and save ``checkpoints/final.pt``."""
    return train(BC(cfg))


__all__ = ["BC", "train_bc"]

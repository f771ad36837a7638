"""How a phase turns experience into learner updates. The run shell calls
``iterate(ctx)`` until ``done(ctx)``; after every iteration it logs, evaluates and
checkpoints on the schedule's ``clock`` (``env_steps`` or ``updates``).

* :class:`ReplayRatio`: one actor-pool step, sequences into the agent replay, then learner
  updates on batches mixed from the data sources until ``updates = (env steps since
  learning began) / env_steps_per_update`` (R2D2, R2D3, DQfD, SQIL, Reactor).
* :class:`OnPolicy`: actor-pool steps until a rollout of ``rollout_steps`` per env is in
  (whole segments, each with the LSTM state stored at its start and the policy's extras),
  ``agent.on_rollout`` (advantages, returns, statistics), then ``epochs`` passes over
  shuffled minibatches of whole segments (PPO, RND-PPO). Segments never cross episodes
  (the sequences' EndBehavior); a segment that straddles two rollouts is learned from in
  the second, with its behaviour log-probabilities as stored.
* :class:`Offline`: learner updates on batches from the data sources only, no env step
  (BC; DQfD's pre-training phase).

After each iteration that updated, the learner's acting weights go to the pool (by version).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Protocol

import numpy as np

from agents.core.batch import uniform_sample
from agents.core.sequences import concat_batches, take

if TYPE_CHECKING:
    from agents.core.context import RunContext

Clock = Literal["env_steps", "updates"]


class Schedule(Protocol):
    clock: Clock
    total: int
    """The clock value at which the phase is over."""

    def done(self, ctx: RunContext) -> bool: ...

    def iterate(self, ctx: RunContext) -> None: ...


def _take_step(ctx: RunContext):
    step = ctx.pool().step()
    ctx.counters.env_steps += step.env_steps
    for ep in step.finished:
        ctx.counters.episodes += 1
        ctx.recent_returns.append(ep.total_return)
        ctx.agent.on_episode(ctx, ep)
    return step


class ReplayRatio:
    clock: Clock = "env_steps"

    def __init__(self, env_steps_per_update: float, batch_size: int, min_replay: int, total: int):
        self.env_steps_per_update = env_steps_per_update
        self.batch_size = batch_size
        self.min_replay = min_replay
        self.total = total
        self._learn_from: tuple[int, int] | None = None  # (env steps, updates) at the start

    def done(self, ctx: RunContext) -> bool:
        return ctx.counters.env_steps >= self.total

    def iterate(self, ctx: RunContext) -> None:
        step = _take_step(ctx)
        if step.sequences is not None:
            ctx.replay.add(step.sequences)
        # the actors' steps: a deployment gate's test episodes bring no data, so no updates
        env_steps = ctx.counters.env_steps - ctx.counters.gate_steps
        if self._learn_from is None and ctx.mix.ready(self.min_replay):
            self._learn_from = (env_steps, ctx.learner.updates)
        if self._learn_from is None:
            return
        start_steps, start_updates = self._learn_from
        due = start_updates + int((env_steps - start_steps) / self.env_steps_per_update)
        if ctx.learner.updates < due:
            while ctx.learner.updates < due:
                ctx.learn(self.batch_size)
            ctx.sync_weights()


class OnPolicy:
    clock: Clock = "env_steps"

    def __init__(self, rollout_steps: int, epochs: int, minibatch_size: int, total: int):
        self.rollout_steps = rollout_steps
        self.epochs = epochs
        self.minibatch_size = minibatch_size
        self.total = total

    def done(self, ctx: RunContext) -> bool:
        return ctx.counters.env_steps >= self.total

    def iterate(self, ctx: RunContext) -> None:
        pool = ctx.pool()
        wanted = self.rollout_steps * pool.num_envs
        gathered, parts = 0, []
        while gathered < wanted or not parts:
            step = _take_step(ctx)
            gathered += step.env_steps
            if step.sequences is not None:
                parts.append(step.sequences)
        batch = ctx.agent.on_rollout(ctx, concat_batches(parts))
        for _ in range(self.epochs):
            order = ctx.rng.permutation(len(batch))
            for idx in np.array_split(order, max(1, len(batch) // self.minibatch_size)):
                metrics, _, _ = ctx.learner.update(uniform_sample(take(batch, idx), idx))
                ctx.record(metrics)
        ctx.sync_weights()


class Offline:
    clock: Clock = "updates"

    def __init__(self, updates: int, batch_size: int):
        self.total = updates
        self.batch_size = batch_size

    def done(self, ctx: RunContext) -> bool:
        return ctx.learner.updates >= self.total

    def iterate(self, ctx: RunContext) -> None:
        ctx.learn(self.batch_size)


__all__ = ["Clock", "Offline", "OnPolicy", "ReplayRatio", "Schedule"]

"""The demo replay: a run's demos (:mod:`agents.core.demos`) cut into sequences in a
prioritized buffer of their own, never evicted, and its data source for the learner's mix
(R2D3, DQfD, SQIL, Reactor)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from agents.core.demos import DemoFiles, context_demos, demo_sequences
from agents.core.mixing import DataSource
from agents.core.replay import PrioritizedSequenceReplay
from agents.core.sequences import EndBehavior

if TYPE_CHECKING:
    from agents.core.context import RunContext


class DemoReplaySpec(NamedTuple):
    """What the demo replay is built from: explicit values of the DemoConfig,
    DemoReplayConfig, ReplayConfig, SequenceConfig and RunConfig groups."""

    files: DemoFiles
    required: bool
    """Demos are required (a config whose ``demos_required`` is False starts empty)."""
    capacity: int
    kind: str
    priority_alpha: float
    priority_beta: float
    priority_eta: float
    seed: int
    """The buffer's seed (the run's + 11)."""
    sequence_length: int
    period: int
    end_behavior: EndBehavior
    burn_in: int

    @classmethod
    def of(cls, cfg: Any) -> DemoReplaySpec:
        """From a config with those groups (R2D3, DQfD, SQIL, Reactor)."""
        return cls(DemoFiles.of(cfg), cfg.demos_required, cfg.demo_capacity,
                   cfg.demo_replay_kind, cfg.priority_alpha, cfg.priority_beta,
                   cfg.priority_eta, cfg.seed + 11, cfg.sequence_length, cfg.period,
                   EndBehavior(cfg.end_behavior), cfg.burn_in)  # fmt: skip


def empty_demo_replay(spec: DemoReplaySpec) -> PrioritizedSequenceReplay:
    """The demo replay's buffer, empty."""
    return PrioritizedSequenceReplay(
        spec.capacity,
        spec.priority_alpha,
        spec.priority_beta,
        spec.priority_eta,
        spec.seed,
        "demo replay",
        persistent=False,  # rebuilt from the demo files on --resume
        kind=spec.kind,
    )


def build_demo_replay(spec: DemoReplaySpec, ctx: RunContext) -> PrioritizedSequenceReplay:
    """The demo replay: the demos of ``spec.files`` (checked against the training env, see
    :func:`load_demos`), cut into sequences exactly as the actors cut agent experience, in a
    prioritized buffer of their own that holds all of them. Without demos (not
    ``spec.required``: ``demostudio coach``) it starts empty."""
    buffer = empty_demo_replay(spec)
    if not spec.files.paths and not spec.required:
        return buffer
    demos = context_demos(spec.files, ctx)
    seqs = demo_sequences(
        demos,
        ctx.preprocess,
        ctx.network,
        spec.sequence_length,
        spec.period,
        spec.end_behavior,
        ctx.device,
        ctx.agent.demo_extras,
        spec.burn_in,
    )
    if len(seqs) > spec.capacity:
        raise ValueError(
            f"--demo-capacity: expected room for all {len(seqs)} demo sequences "
            f"(demos are never evicted), got {spec.capacity}"
        )
    buffer.add(seqs)
    return buffer


def demo_source(
    spec: DemoReplaySpec, ctx: RunContext, ratio: Callable[[float], float],
    name: str = "demo replay",
) -> DataSource:  # fmt: skip
    """:func:`build_demo_replay` as a named data source flagged ``demo``."""
    return DataSource(name, build_demo_replay(spec, ctx), ratio, demo=True)


__all__ = ["DemoReplaySpec", "build_demo_replay", "demo_source", "empty_demo_replay"]

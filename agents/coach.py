"""Live coaching (``demostudio coach ALGO``): the algorithm trains through the run shell in a
background thread while a window shows its current policy playing one env in real time; a
person who takes over (T) corrects it, and each corrected stretch enters the running
trainer's demo replay at once (and is saved as an episode file by the window's recorder).

::

    main thread: the window                        trainer thread: train(agent)
    CoachAgent  own copy of the acting network  <- weights by version, every ~0.25 s
                (never the learner's live module)   (CoachedAgent.after_iteration)
    LiveDemoCutter  the window's steps -> sequences of the person's steps -> queue
                                                     -> drained into the demo replay
    window closed -> link.stop                    -> after_iteration says stop: final
                                                     evaluation and checkpoint

The window's steps are cut exactly as the demo loader cuts a take-over file
(:func:`agents.core.demos.keep_demo_steps` on the same grid; stored states from the window's
policy, as an actor's), so ``--resume`` reading the saved files back gives the same
sequences. When control goes back to the agent the sequences still open are sent at once,
zero-padded; their later full versions carry only the steps the padded ones lacked.
"""

from __future__ import annotations

import copy
import math
import queue
import threading
import time
from typing import Any, NamedTuple

import numpy as np
import torch

from agents.coach_config import coach_config_cls
from agents.core.agent import Agent, Phase
from agents.core.context import RunContext
from agents.core.controller import AgentController
from agents.core.demos import STEP_EXTRA, keep_demo_steps
from agents.core.mixing import DataSource
from agents.core.policy import BatchPolicy
from agents.core.preprocess import Preprocessor
from agents.core.run import TrainResult, train
from agents.core.sequences import EndBehavior, SequenceBatch, SequenceWriter, take
from agents.core.wrapper import AgentWrapper

PUBLISH_SECONDS = 0.25
"""The window's policy gets new weights at most this often."""


class CoachProgress(NamedTuple):
    """What the window's training panel shows."""

    algo: str
    phase: str = "starting"
    env_steps: int = 0
    total_env_steps: int = 0
    updates: int = 0
    recent_return: float = math.nan
    """Mean return of the last 10 training episodes."""
    demo_share: float = math.nan
    """Share of recent batch elements drawn from the demo replay."""
    demo_sequences: int = 0
    """Sequences in the demo replay (files and corrections)."""
    done: bool = False

    def lines(self, stretches: int, inserted: int, version: int) -> list[str]:
        if self.done:
            head = f"{self.algo}: training finished at {self.env_steps:,} env steps"
        elif self.phase == "pretrain":
            head = f"{self.algo} pre-training on demos: {self.updates:,} updates"
        else:
            head = (
                f"{self.algo} {self.phase}: {self.env_steps:,} / {self.total_env_steps:,} "
                f"env steps, {self.updates:,} updates"
            )
        ret = "-" if math.isnan(self.recent_return) else f"{self.recent_return:.1f}"
        share = "-" if math.isnan(self.demo_share) else f"{self.demo_share:.2f}"
        return [
            head,
            f"recent return {ret}   demo share {share}   policy v{max(version, 0)}",
            f"corrections: {stretches} stretch{'' if stretches == 1 else 'es'}, "
            f"{inserted} sequences in; demo replay {self.demo_sequences}",
        ]


class CoachLink:
    """What the window and the trainer thread share; every method is thread-safe."""

    def __init__(self, algo: str):
        self._lock = threading.Lock()
        self.corrections: queue.SimpleQueue[SequenceBatch] = queue.SimpleQueue()
        self.stop = threading.Event()
        """Set by the window: the trainer stops at its next iteration."""
        self.ready = threading.Event()
        """The acting network is published (or the trainer failed before)."""
        self.finished = threading.Event()
        self.error: BaseException | None = None
        self.result: TrainResult | None = None
        self.acting: ActingTemplate | None = None
        self._weights: dict[str, torch.Tensor] | None = None
        self._version = -1
        self.progress = CoachProgress(algo)
        self.stretches = 0
        """Take-overs so far, the one under way included (the window's count)."""
        self.inserted = 0
        """Correction sequences in the demo replay (the trainer's count)."""
        self.dropped = 0
        """Correction sequences that found the demo replay full."""

    def publish(self, weights: dict[str, torch.Tensor], version: int) -> None:
        with self._lock:
            self._weights, self._version = weights, version

    def weights_after(self, version: int) -> tuple[dict[str, torch.Tensor], int] | None:
        """The newest weights if newer than ``version``."""
        with self._lock:
            if self._weights is None or self._version <= version:
                return None
            return self._weights, self._version

    @property
    def version(self) -> int:
        with self._lock:
            return self._version

    def submit(self, seqs: SequenceBatch) -> None:
        self.corrections.put(seqs)

    def status_lines(self) -> list[str]:
        lines = self.progress.lines(self.stretches, self.inserted, self.version)
        if self.dropped:
            lines.append(f"demo replay full: {self.dropped} sequences dropped (--demo-capacity)")
        return lines


class ActingTemplate(NamedTuple):
    """What the window needs to act and to cut corrections (built by the trainer thread)."""

    network: torch.nn.Module
    """A CPU copy of the acting network (the window copies it again)."""
    preprocess: Preprocessor
    agent: Agent
    cfg: Any


class CoachedAgent(AgentWrapper):
    """An algorithm's agent as the coach runs it: publishes the acting network and weights,
    drains corrections into the demo replay, reports progress and stops when the window
    closes. Everything else is the algorithm's own (same name, config and checkpoints:
    ``train ALGO --resume`` and ``watch`` read a coached run as any other)."""

    def __init__(self, agent: Agent, link: CoachLink):
        super().__init__(agent)
        self.link = link
        self._demo: DataSource | None = None
        self._published = 0.0

    def start(self, ctx: RunContext) -> None:
        super().start(ctx)
        sources = ctx.mix.sources if ctx.mix is not None else []
        self._demo = next((s for s in sources if s.demo), None)
        if self._demo is None:
            raise ValueError(f"coach: expected {self.name} to have a demo replay, got none")
        net = ctx.learner.networks[self.acting_network]
        template = copy.deepcopy(net).to("cpu").requires_grad_(False)
        self.link.acting = ActingTemplate(template, ctx.preprocess, self, self.cfg)
        self._report(ctx, force=True)
        self.link.ready.set()

    def on_phase_start(self, ctx: RunContext, phase: Phase) -> None:
        super().on_phase_start(ctx, phase)
        self.link.progress = self.link.progress._replace(phase=phase.name)

    def after_iteration(self, ctx: RunContext) -> bool:
        stop = super().after_iteration(ctx)
        self.drain()
        self._report(ctx)
        return stop or self.link.stop.is_set()

    def finish(self, ctx: RunContext) -> None:
        super().finish(ctx)
        self.drain()
        self._report(ctx, force=True)

    @property
    def demo_replay(self):
        """The running trainer's demo replay (None before ``start``)."""
        return None if self._demo is None else self._demo.buffer

    def drain(self) -> int:
        """Move the queued corrections into the demo replay (never evicting a demo)."""
        buf, moved = self._demo.buffer, 0
        while True:
            try:
                seqs = self.link.corrections.get_nowait()
            except queue.Empty:
                return moved
            room = buf.capacity - len(buf)
            if len(seqs) > room:
                self.link.dropped += len(seqs) - room
                seqs = take(seqs, np.arange(room))
            if len(seqs):
                buf.add(seqs)
                moved += len(seqs)
                self.link.inserted += len(seqs)

    def _report(self, ctx: RunContext, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._published < PUBLISH_SECONDS:
            return
        self._published = now
        version = ctx.learner.updates
        if force or version != self.link.version:
            weights = {k: v.detach().to("cpu", copy=True) for k, v in ctx.acting_weights().items()}
            self.link.publish(weights, version)
        shares = ctx.stats.get("demo_share", [])
        old = self.link.progress
        self.link.progress = old._replace(
            env_steps=ctx.counters.env_steps,
            total_env_steps=self.cfg.total_env_steps,
            updates=ctx.learner.updates,
            recent_return=(
                float(np.mean(ctx.recent_returns[-10:])) if ctx.recent_returns else math.nan
            ),
            demo_share=float(np.mean(shares[-100:])) if shares else old.demo_share,
            demo_sequences=len(self._demo.buffer),
        )


def coached(agent_cls: type[Agent], cfg: Any, link: CoachLink) -> CoachedAgent:
    """An ``agent_cls`` on ``cfg``, run by the coach (:class:`CoachedAgent`)."""
    return CoachedAgent(agent_cls(cfg), link)


def run_training(agent: Agent, link: CoachLink) -> None:
    """The trainer thread's body: the run shell; its result or error goes to ``link``."""
    try:
        link.result = train(agent)
    except BaseException as exc:  # handed to the window's thread, which reports it
        link.error = exc
    finally:
        link.progress = link.progress._replace(done=True)
        link.finished.set()
        link.ready.set()


class CoachAgent(AgentController):
    """The policy the window shows: its own network copy, new weights pulled by version
    before each step; ``taken`` (a person drives) as for any agent controller."""

    def __init__(self, link: CoachLink, epsilon: float, seed: int):
        acting = link.acting
        agent, cfg = acting.agent, acting.cfg
        policy = BatchPolicy.copy_of(
            acting.network,
            agent.eval_selector(epsilon),
            1,
            torch.device("cpu"),
            np.random.default_rng(seed),
        )
        super().__init__(policy, acting.preprocess, name=f"policy:{agent.name}")
        self.link = link
        self.cfg = cfg

    def act(self, env, observation) -> int:
        newer = self.link.weights_after(self.policy.version)
        if newer is not None:
            self.policy.load_weights(*newer)
        return super().act(env, observation)


class LiveDemoCutter:
    """The window's steps -> the person's demo sequences, sent to the trainer as they form
    (the recorder calls ``begin``/``step``/``flush``/``end``; see the module docstring)."""

    def __init__(self, link: CoachLink, agent: CoachAgent):
        cfg = agent.cfg
        self.link = link
        self.agent = agent
        self.burn_in = cfg.burn_in
        self.writer = SequenceWriter(cfg.sequence_length, cfg.period, EndBehavior(cfg.end_behavior))
        self.extras = link.acting.agent.demo_extras
        self.person: list[bool] = []
        self.learned_until: dict[int, int] = {}
        self.sent_person = 0  # person steps when the last flush went
        self.open = False

    def _one(self, observation) -> dict[str, np.ndarray]:
        return self.agent.preprocess.one(observation)

    def begin(self, observation) -> None:
        h, _ = self.agent.policy.numpy_state()
        zeros = np.zeros_like(h[0])  # the state before an episode's first observation
        self.writer.begin(self._one(observation), zeros, zeros)
        self.person, self.learned_until, self.sent_person = [], {}, 0
        self.open = True

    def step(self, action, reward: float, terminated: bool, next_obs, person: bool) -> None:
        """One env step; the window's policy has just acted on the observation before it."""
        if not self.open:
            return
        h, c = self.agent.policy.numpy_state()
        extras = {k: v[0] for k, v in self.extras(np.array([int(action)])).items()}
        extras[STEP_EXTRA] = np.int64(len(self.person))
        if person and not (self.person and self.person[-1]):
            self.link.stretches += 1  # a take-over starts
        self.person.append(bool(person))
        seqs = self.writer.step(
            int(action), float(reward), bool(terminated), self._one(next_obs), h[0], c[0], extras
        )
        if seqs is not None:
            self._send(seqs)

    def flush(self) -> None:
        """Control went back to the agent: the stretch's open sequences go now (padded)."""
        if not self.open or sum(self.person) == self.sent_person:
            return
        self.sent_person = sum(self.person)
        seqs = copy.deepcopy(self.writer).end()
        if seqs is not None:
            self._send(seqs)
            steps = len(self.person)
            for start in seqs.extras[STEP_EXTRA][:, 0]:
                self.learned_until[int(start)] = steps

    def end(self, keep: bool) -> None:
        """The episode is over (``keep``: saved; a discarded episode sends nothing more)."""
        if not self.open:
            return
        seqs = self.writer.end()
        self.open = False
        if keep and seqs is not None:
            self._send(seqs)

    def _send(self, seqs: SequenceBatch) -> None:
        if not any(self.person):
            return
        kept = keep_demo_steps(seqs, np.array(self.person), self.burn_in, self.learned_until)
        if kept is not None:
            self.link.submit(kept)


__all__ = [
    "ActingTemplate",
    "CoachAgent",
    "CoachLink",
    "CoachProgress",
    "CoachedAgent",
    "LiveDemoCutter",
    "coach_config_cls",
    "coached",
    "run_training",
]

"""The run shell shared by every algorithm: ``train(agent)`` opens the run folder (fresh, or
resumed: :mod:`agents.core.resume`), builds the run's parts (:mod:`agents.core.build`), runs
``agent.phases()`` in order, each iterated by the loop (:mod:`agents.core.loop`), then the
final evaluation and checkpoint, and returns the result. No algorithm has its own loop. A run
that fails to start leaves no run folder behind; one that fails later keeps what it learned
as a step checkpoint; Ctrl-C, SIGTERM and SIGHUP save final.pt marked interrupted.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import NamedTuple

import torch

from agents.core.agent import Agent
from agents.core.build import build_run, resolve_device, resolve_env
from agents.core.checkpoint import latest_checkpoint
from agents.core.config import DemoConfig, InteractConfig, RunConfig
from agents.core.context import RunContext
from agents.core.evaluate import evaluate
from agents.core.logger import run_folder_problem
from agents.core.loop import Loop, checkpoint_payload
from agents.core.resume import config_changes, open_run
from agents.core.run_folder import default_run_dir, discard_run
from agents.core.stop_rule import StopRule
from agents.core.stopping import (
    RunInterrupted,
    check_stop,
    finishing,
    signal_name,
    stop_signals,
    stop_signum,
)


class TrainResult(NamedTuple):
    run_dir: Path
    env_steps: int
    updates: int
    evals: list[tuple[int, float]]
    """(env steps, mean return) of each evaluation."""
    solved_at: int | None
    """Env steps of the evaluation at which the stop rule held (None: it never did)."""
    stop_rule: StopRule | None = None
    """The rule that would end the run before its budget (None: it ran the whole budget)."""


def train(agent: Agent) -> TrainResult:
    """Run ``agent`` (a fresh run, or ``--resume``) and return what it did; SIGTERM and SIGHUP
    stop it as Ctrl-C does (:mod:`agents.core.stopping`)."""
    with stop_signals():
        return _train(agent)


def _train(agent: Agent) -> TrainResult:
    cfg = agent.cfg
    resolve_env(cfg)
    cfg.validate()
    torch.set_num_threads(max(1, cfg.torch_threads))
    torch.manual_seed(cfg.seed)
    device = resolve_device(cfg.device)
    run_dir = Path(cfg.run_dir) if cfg.run_dir else default_run_dir(agent.name, cfg.env, cfg.seed)
    problem = run_folder_problem(run_dir)
    if problem is not None:
        raise ValueError(f"--run-dir: {problem}")
    payload = open_run(agent, run_dir, device)
    created = not run_dir.exists()
    env = agent.make_env()
    try:
        ctx, note = build_run(agent, env, run_dir, device, payload)
    except BaseException:
        env.close()
        if created:
            shutil.rmtree(run_dir, ignore_errors=True)
        raise
    for line in ctx.extras.get("demo_report", ()):  # once the run has started
        is_warning = line.startswith("warning: ")  # the counts are news; a warning is advice
        print(f"demostudio: {line}" if is_warning else line,
              file=sys.stderr if is_warning else sys.stdout)  # fmt: skip
    for line in cfg.warnings():  # once the run has started: never before an error line
        print(f"demostudio: warning: {line}", file=sys.stderr)
    interact = cfg.group(InteractConfig) if isinstance(cfg, InteractConfig) else None
    demos = tuple(cfg.demos or ()) if isinstance(cfg, DemoConfig) else ()
    shell = _Shell(ctx, cfg.group(RunConfig), interact, demos, created)
    return shell.run(note, resumed=payload is not None)


class _Shell(Loop):
    """The run shell: the phases in order, the final evaluation and checkpoint, and a failed
    or stopped run's cleanup (each phase is iterated by :class:`agents.core.loop.Loop`)."""

    def run(self, note: str | None, resumed: bool) -> TrainResult:
        ctx, cfg, agent = self.ctx, self.run_cfg, self.ctx.agent
        if note is not None:
            items = len(ctx.replay) if ctx.replay is not None else 0
            ctx.logger.log("resume", ctx.counters.env_steps, note=note, replay_items=items)
            self.write(f"resumed at {ctx.counters.env_steps} env steps; {note}")
        self.start_stop_rule()
        phases = agent.phases()
        first = ctx.counters.phase if resumed else 0
        stop: KeyboardInterrupt | None = None
        failed: BaseException | None = None
        completed = False
        try:
            agent.start(ctx)
            stopped = False
            for i, phase in enumerate(phases):
                if i < first or (resumed and i < len(phases) - 1 and phase.schedule.done(ctx)):
                    continue  # done before this resume (its end was handled then)
                ctx.counters.phase = i
                stopped = self.run_phase(phase)
                agent.on_phase_end(ctx, phase)
                if stopped:
                    break
                if phase.end_checkpoint:
                    self.save(ctx.run_dir / "checkpoints" / phase.end_checkpoint)
                if phase.eval_at_end and cfg.eval_every:
                    self.evaluate(ctx.counters.env_steps)
            check_stop()  # a stop asked for as the phase ended is not the run's end
            agent.finish(ctx)
            env_steps = ctx.counters.env_steps
            if self.solved_at is None and (
                agent.final_eval_always
                or (cfg.eval_every and (not ctx.evals or ctx.evals[-1][0] != env_steps))
            ):
                self.evaluate(env_steps)
            completed = True
        except KeyboardInterrupt as exc:  # Ctrl-C, SIGTERM, SIGHUP: final.pt, interrupted
            stop = exc
            raise RunInterrupted(ctx.run_dir, ctx.counters.env_steps, stop_signum(exc)) from None
        except BaseException as exc:  # failed, or exited (a library's SystemExit): no final.pt,
            failed = exc  # which would look finished
            raise
        finally:
            with finishing():  # a stop signal now does not cut the saving short
                env_steps = ctx.counters.env_steps
                if completed or stop is not None:
                    self.save(ctx.run_dir / "checkpoints" / "final.pt", not completed)
                elif env_steps > 0:
                    self.save_progress(env_steps)
                if stop is not None:
                    ctx.logger.log("interrupted", env_steps, updates=ctx.learner.updates,
                                   signal=signal_name(stop_signum(stop)))  # fmt: skip
                if failed is not None:
                    ctx.logger.log("failed", env_steps, updates=ctx.learner.updates,
                                   error=f"{type(failed).__name__}: {failed}"[:500])  # fmt: skip
                ctx.logger.close()
                ctx.close()
                ctx.env.close()
                if failed is not None and latest_checkpoint(ctx.run_dir) is None:
                    discard_run(ctx.run_dir, self.created)
        return TrainResult(
            ctx.run_dir, ctx.counters.env_steps, ctx.learner.updates, ctx.evals, self.solved_at,
            self.stop_rule,
        )  # fmt: skip


__all__ = [
    "RunContext",
    "RunInterrupted",
    "TrainResult",
    "checkpoint_payload",
    "config_changes",
    "default_run_dir",
    "evaluate",
    "resolve_device",
    "resolve_env",
    "train",
]

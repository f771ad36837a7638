"""The loop: one phase of a run iterated by its schedule, with the log rows, the deployment
gate's tests, the evaluations and the checkpoints on the schedule's clock (on multiples of
their periods, also after a resume; checkpoints also every --checkpoint-minutes)."""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from agents.core.agent import Phase
from agents.core.checkpoint import (
    CHECKPOINT_FORMAT,
    CHECKPOINT_VERSION,
    periodic_path,
    prune_checkpoints,
    save_checkpoint,
    save_replays,
)
from agents.core.config import InteractConfig, RunConfig
from agents.core.context import RunContext
from agents.core.evaluate import EvalResult, evaluate
from agents.core.networks import RecurrentNetwork
from agents.core.preprocess import spec_to_json
from agents.core.stop_rule import StopRule, stop_rule
from agents.core.stopping import check_stop


def checkpoint_payload(ctx: RunContext) -> dict[str, Any]:
    ctx.counters.updates = ctx.learner.updates
    return {
        "format": CHECKPOINT_FORMAT,
        "version": CHECKPOINT_VERSION,
        "algo": ctx.agent.name,
        "config": ctx.config,
        "network_specs": {
            k: n.spec.to_json()
            for k, n in ctx.learner.networks.items()
            if isinstance(n, RecurrentNetwork)
        },
        "acting_network": ctx.agent.acting_network,
        **ctx.learner.state_dict(),
        "obs_spec": spec_to_json(ctx.preprocess.spec),
        "num_actions": ctx.info.num_actions,
        "counters": ctx.counters.to_dict(),
        "agent_state": ctx.agent.state_dict(),
        **({"deployed": ctx.gate.state_dict()} if ctx.gate is not None else {}),
    }


EVAL_STEPS_PER_ENV_STEP = 5
"""An evaluation plays at most this many env steps for each env step trained since the one
before: evaluations come every ``eval_every`` env steps while their episodes are short, and
further apart (at a later multiple of it) where they are long (Atari games, failing MiniGrid
episodes to their step limit), so a short ``eval_every`` never turns a run into evaluation."""


def next_eval_at(now: int, every: int, played: int) -> float:
    """The env-step clock's next evaluation after one at ``now`` that played ``played`` env
    steps: the next multiple of ``every``, or a later one at least ``played /
    EVAL_STEPS_PER_ENV_STEP`` env steps on."""
    if every <= 0:
        return math.inf
    first = (now // every + 1) * every
    need = math.ceil(played / EVAL_STEPS_PER_ENV_STEP)
    return first if need <= every else max(first, math.ceil((now + need) / every) * every)


class Loop:
    """Runs the phases of one run (:meth:`run_phase`); the run shell adds their order and
    the run's end."""

    def __init__(self, ctx: RunContext, run_cfg: RunConfig, interact: InteractConfig | None,
                 demos: tuple[Path, ...] = (), created: bool = False):  # fmt: skip
        self.ctx = ctx
        self.run_cfg = run_cfg
        """The run's own settings: progress, seed, env, the evaluation's episodes."""
        self.interact = interact
        """The budget, checkpoints, stop rule and gate of a run that interacts (BC: None)."""
        self.demos = demos
        """The demos (the stop rule's ``demos`` target is their mean return)."""
        self.solved_at: int | None = None
        self.stop_rule: StopRule | None = None
        self.created = created
        """This run made its folder (a failure before the first step removes it)."""

    def write(self, text: str) -> None:
        if self.run_cfg.progress:
            from tqdm import tqdm

            tqdm.write(text)

    def save(self, path: Path, interrupted: bool = False) -> None:
        """Write a checkpoint; ``interrupted``: the run was stopped before its end (a plain
        bool in the payload, which evaluate, watch and a later ``--resume`` read)."""
        ctx = self.ctx
        save_checkpoint(path, {**checkpoint_payload(ctx), "interrupted": interrupted})
        if self.interact is not None and self.interact.save_replay and ctx.mix is not None:
            buffers = {b.name: b.state_arrays() for b in ctx.mix.buffers if b.persistent}
            save_replays(ctx.run_dir, ctx.counters.env_steps, buffers)

    def reached_stop(self) -> bool:
        """The run's stop rule (:mod:`agents.core.stop_rule`) holds for its evaluations."""
        rule = self.stop_rule
        return rule is not None and rule.reached([r for _, r in self.ctx.evals])

    def start_stop_rule(self) -> None:
        """Decide the run's stop rule, say it on the console and in metrics.jsonl (a
        ``stop_rule`` row: target, evals, source)."""
        cfg, ctx = self.interact, self.ctx
        if cfg is None:
            return
        env_id = ctx.env.spec.id if ctx.env.spec is not None else str(self.run_cfg.env)
        rule = stop_rule(cfg.stop_when, cfg.stop_return, cfg.stop_evals, self.demos, env_id)
        self.stop_rule = rule
        budget = max(  # an on-policy run's budget is whole rollouts (its schedule's total)
            [cfg.total_env_steps]
            + [p.schedule.total for p in ctx.agent.phases() if p.schedule.clock == "env_steps"]
        )
        if rule is None:
            self.write(f"runs its whole budget of {budget} env steps")
            return
        ctx.logger.log("stop_rule", ctx.counters.env_steps, stop_target=rule.target,
                       stop_evals=rule.evals, stop_source=rule.source)  # fmt: skip
        self.write(f"{rule.describe()}; at most {budget} env steps")

    def gate_test(self, clock: int) -> None:
        """The learner's network plays the gate's test episodes (their env steps counted) and
        is deployed if it earns it (:mod:`agents.core.gate`)."""
        ctx, gate = self.ctx, self.ctx.gate
        spent = ctx.counters.gate_steps
        if gate is None or not gate.due(ctx.counters.env_steps, spent):
            return
        seed = gate.test_seed(self.run_cfg.seed, clock)
        run = self.run_cfg
        result = evaluate(ctx, gate.episodes, seed, stop=gate.hopeless, horizon=gate.horizon,
                          label=f"gate test @ {ctx.counters.env_steps} env steps",
                          epsilon=run.eval_epsilon, progress=run.progress)  # fmt: skip
        steps = int(sum(result.lengths))
        ctx.counters.env_steps += steps
        ctx.counters.gate_steps = spent + steps
        before = gate.weights
        passed = gate.judge(result.returns, ctx.acting_weights(), ctx.learner.updates)
        worst, played = min(result.returns), len(result.returns)
        ctx.logger.log(
            "gate", ctx.counters.env_steps, tb_step=clock, gate_return=result.mean,
            gate_worst=worst, gate_played=played, gate_passed=float(passed),
            deployed_updates=gate.version, deployed_worst=gate.score, gate_best=gate.best,
            deployed_passed=float(gate.passed), gate_steps=spent + steps,
        )  # fmt: skip
        verdict = "deployed it" if passed else (
            f"kept the deployed network (worst {gate.score:.2f})" if gate.weights is before
            else "deployed it provisionally (none has passed; the highest worst of a whole test)"
        )  # fmt: skip
        self.write(f"gate @ {ctx.counters.env_steps} env steps: the learner's network, "
                   f"worst {worst:.2f} of {played} episodes, {verdict}")  # fmt: skip

    def evaluate(self, clock: int) -> EvalResult:
        ctx, cfg = self.ctx, self.run_cfg
        env_steps = ctx.counters.env_steps
        deployed = ctx.gate.weights if ctx.gate is not None else None
        result = evaluate(ctx, cfg.eval_episodes, seed=cfg.seed + 10_000 + clock, weights=deployed,
                          label=f"evaluating @ {env_steps} env steps", epsilon=cfg.eval_epsilon,
                          progress=cfg.progress)  # fmt: skip
        ctx.evals.append((env_steps, result.mean))
        ctx.logger.log(
            "eval",
            env_steps,
            tb_step=clock,
            eval_return=result.mean,
            eval_success=result.success_rate,
            eval_length=float(np.mean(result.lengths)),
            updates=ctx.learner.updates,
            **({"deployed_updates": ctx.gate.version} if deployed is not None else {}),
            **ctx.agent.eval_metrics(ctx),
        )
        which = "" if deployed is None else f" (the deployed network of update {ctx.gate.version})"
        self.write(f"eval @ {env_steps} env steps, {ctx.learner.updates} updates: "
                   f"mean return {result.mean:.2f}{which}")  # fmt: skip
        return result

    def log_row(self, phase: Phase, clock: int, since: tuple[float, int, int]) -> dict:
        ctx = self.ctx
        t0, steps0, updates0 = since
        elapsed = max(time.perf_counter() - t0, 1e-9)
        row: dict[str, float] = {k: float(np.mean(v)) for k, v in ctx.stats.items()}
        env_steps = ctx.counters.env_steps
        if phase.schedule.clock == "env_steps":
            row["episode_return"] = (
                float(np.mean(ctx.recent_returns)) if ctx.recent_returns else float("nan")
            )
            row["episodes"] = ctx.counters.episodes
            row["sps"] = (env_steps - steps0) / elapsed
            if ctx.replay is not None:
                row["replay_size"] = len(ctx.replay)
            ctx.recent_returns[:] = ctx.recent_returns[-10:]
        row["updates"] = ctx.learner.updates
        row["ups"] = (ctx.learner.updates - updates0) / elapsed
        row.update(ctx.agent.metrics(ctx))
        if ctx._pool is not None:
            row.update(ctx._pool.metrics())
        ctx.logger.log(phase.log_kind, env_steps, tb_step=clock, **row)
        ctx.stats.clear()
        return row

    def run_phase(self, phase: Phase) -> bool:
        """Iterate ``phase`` until done; True when the run must stop (solved, or the agent
        said so)."""
        from tqdm import tqdm

        ctx, cfg, sched = self.ctx, self.run_cfg, phase.schedule

        def clock() -> int:
            return ctx.counters.env_steps if sched.clock == "env_steps" else ctx.learner.updates

        def next_multiple(every: int) -> float:
            return (clock() // every + 1) * every if every > 0 else math.inf

        next_log = next_multiple(phase.log_every)
        next_eval = next_multiple(phase.eval_every)
        next_ckpt = next_multiple(phase.checkpoint_every)
        every_s = 60.0 * self.interact.checkpoint_minutes if self.interact else 0.0  # 0: off
        ckpt_at = time.monotonic() + every_s if every_s > 0 else math.inf
        since = (time.perf_counter(), ctx.counters.env_steps, ctx.learner.updates)
        unit = "step" if sched.clock == "env_steps" else "upd"
        desc = f"{ctx.agent.name} {phase.name} {cfg.env}"
        plain = cfg.progress and not sys.stderr.isatty()  # a log file: lines, not a bar
        said_at = time.monotonic()
        bar = tqdm(total=sched.total, initial=min(clock(), sched.total), unit=unit, leave=False,
                   desc=desc, disable=not cfg.progress or plain, dynamic_ncols=True)  # fmt: skip
        ctx.agent.on_phase_start(ctx, phase)
        try:
            while not sched.done(ctx):
                check_stop()
                before = clock()
                sched.iterate(ctx)
                now = clock()
                bar.update(min(now, sched.total) - min(before, sched.total))
                if now >= next_log:
                    row = self.log_row(phase, now, since)
                    since = (time.perf_counter(), ctx.counters.env_steps, ctx.learner.updates)
                    next_log = next_multiple(phase.log_every)
                    bar.set_postfix_str(bar_postfix(row))
                    if plain and time.monotonic() - said_at >= PLAIN_EVERY_S:
                        said_at = time.monotonic()
                        done = f"{min(now, sched.total)}/{sched.total} {unit}s"
                        print(f"{desc}: {done} {bar_postfix(row)}".rstrip(), file=sys.stderr,
                              flush=True)  # fmt: skip
                if ctx.agent.after_iteration(ctx):
                    return True
                if now >= next_eval and not sched.done(ctx):  # the end has its own evaluation
                    self.gate_test(now)
                    played = sum(self.evaluate(now).lengths)
                    next_eval = (
                        next_eval_at(now, phase.eval_every, played)
                        if sched.clock == "env_steps"
                        else next_multiple(phase.eval_every)
                    )
                    if self.reached_stop():
                        self.solved_at = ctx.counters.env_steps
                        return True
                if now >= next_ckpt or time.monotonic() >= ckpt_at:
                    self.save(periodic_path(ctx.run_dir, ctx.counters.env_steps))
                    if self.interact is not None:  # periodic checkpoints are interaction's
                        prune_checkpoints(ctx.run_dir, self.interact.keep_checkpoints)
                    next_ckpt = next_multiple(phase.checkpoint_every)
                    ckpt_at = time.monotonic() + every_s if every_s > 0 else math.inf
            if ctx.stats:  # the last partial window
                self.log_row(phase, clock(), since)
        finally:
            bar.close()
        return False

    def save_progress(self, env_steps: int) -> None:
        """A failed run's state as a step checkpoint, not final.pt (it did not finish): what it
        learned since its last checkpoint is kept, and ``--resume`` continues from it. A
        failure to save (the disk full) leaves the run's own error to be told."""
        path = periodic_path(self.ctx.run_dir, env_steps)
        if path.exists():
            return
        try:
            self.save(path)
        except Exception:
            path.unlink(missing_ok=True)


PLAIN_EVERY_S = 30.0
"""With stderr not a terminal (a log file), a plain progress line at the first log row after
this many seconds, in place of the bar's cursor codes."""


def bar_postfix(row: dict) -> str:
    """``ret R loss L`` of a log row, each only once there is one: no ``ret nan`` before
    the first episode has ended."""
    parts = []
    for name, key, fmt in (("ret", "episode_return", ".1f"), ("loss", "loss", ".3f")):
        value = row.get(key)
        if isinstance(value, (int, float, np.number)) and math.isfinite(value):
            parts.append(f"{name} {float(value):{fmt}}")
    return " ".join(parts)


__all__ = ["Loop", "bar_postfix", "checkpoint_payload"]

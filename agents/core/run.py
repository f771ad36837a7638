"""The run shell shared by every algorithm: the run folder and ``config.json``, ``--resume``
with the config diff, the phases and their schedules, a progress bar, metrics.jsonl and
TensorBoard, the evaluation and checkpoint schedule (on multiples of their periods, also
after a resume), the final evaluation and the result. No algorithm has its own loop.

``train(agent)`` runs ``agent.phases()`` in order; each phase's schedule
(:mod:`agents.core.schedules`) is iterated until done, and after every iteration the shell
logs, asks ``agent.after_iteration`` (which may stop the run), evaluates and checkpoints on
the schedule's clock. A run that fails to start leaves no run folder behind.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np
import torch

from agents.core import footprint
from agents.core.agent import Agent, Phase
from agents.core.checkpoint import (
    CHECKPOINT_FORMAT,
    CHECKPOINT_VERSION,
    latest_checkpoint,
    periodic_path,
    prune_checkpoints,
    save_checkpoint,
    save_replays,
)
from agents.core.config import ReplayConfig, config_to_dict
from agents.core.context import EnvInfo, RunContext
from agents.core.controller import AgentController
from agents.core.evaluate import EvalResult, run_episodes
from agents.core.gate import DeployGate, lengthen
from agents.core.learner import Learner
from agents.core.logger import RunLogger, run_folder_problem
from agents.core.mixing import DataSource, LinearSchedule, ReplayMix
from agents.core.networks import RecurrentNetwork
from agents.core.policy import BatchPolicy
from agents.core.preprocess import make_preprocessor, spec_to_json
from agents.core.replay import PrioritizedSequenceReplay
from agents.core.resume import (
    build_networks,
    config_changes,
    load_learner,
    open_run,
    resume_note,
)
from agents.core.run_folder import default_run_dir, discard_run
from agents.core.stopping import (
    RunInterrupted,
    check_stop,
    finishing,
    signal_name,
    stop_signals,
    stop_signum,
)
from demostudio.episode import ensure_registered, find_episodes, read_summary


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device: expected an available device, got cuda (torch sees no GPU)")
    return torch.device(name)


def resolve_env(cfg: Any) -> str:
    """``cfg.env``, or the one env every demo was recorded on when ``--env`` is not given
    (set into ``cfg``); ValueError otherwise. The id is checked to be registered."""
    if not cfg.env:
        demos = tuple(getattr(cfg, "demos", ()) or ())
        ids = set()
        if demos and not getattr(cfg, "demo_env_override", None):
            files = find_episodes(list(demos))
            if not files:
                raise ValueError(
                    f"--demos {' '.join(map(str, demos))}: expected episode files (*.h5) to "
                    f"take the env from, found none (or give --env)"
                )
            ids = {read_summary(p).env_id for p in files}
        if len(ids) != 1:
            found = f"demos of {sorted(ids)}" if ids else "none"
            raise ValueError(
                f"--env: expected a Gymnasium env id (or demos all recorded on one env), "
                f"got {found}"
            )
        cfg.env = ids.pop()
    ensure_registered(cfg.env)
    return cfg.env


class TrainResult(NamedTuple):
    run_dir: Path
    env_steps: int
    updates: int
    evals: list[tuple[int, float]]
    """(env steps, mean return) of each evaluation."""
    solved_at: int | None
    """Env steps of the evaluation that reached ``stop_return`` (the last of the
    ``stop_evals`` whose mean did; None if never)."""


def checkpoint_payload(ctx: RunContext) -> dict[str, Any]:
    ctx.counters.updates = ctx.learner.updates
    return {
        "format": CHECKPOINT_FORMAT,
        "version": CHECKPOINT_VERSION,
        "algo": ctx.agent.name,
        "config": config_to_dict(ctx.cfg),
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


def evaluate(
    ctx: RunContext,
    episodes: int,
    seed: int,
    weights: dict[str, torch.Tensor] | None = None,
    stop: Callable[[list[float]], bool] | None = None,
    horizon: float = 1.0,
) -> EvalResult:
    """Play ``episodes`` with the evaluation policy on a copy of the acting network, with
    ``weights`` (the deployed ones) or the learner's own (``stop``: as
    :func:`run_episodes`; ``horizon``: the step limit as a multiple of the env's)."""
    env = ctx.agent.make_env()
    lengthen(env, horizon)  # 1: the env's own limit, unchanged
    try:
        policy = BatchPolicy.copy_of(
            ctx.learner.networks[ctx.agent.acting_network],
            ctx.agent.eval_selector(ctx.cfg.eval_epsilon),
            1,
            ctx.device,
            np.random.default_rng(seed),
        )
        if weights is not None:
            policy.load_weights(weights, -1)
        ctrl = AgentController(policy, ctx.preprocess, name=f"policy:{ctx.agent.name}")
        return run_episodes(env, ctrl, episodes, seed=seed, stop=stop)
    finally:
        env.close()


def _build(agent: Agent, env: gym.Env, run_dir: Path, device: torch.device,
           payload: dict | None) -> tuple[RunContext, str | None]:  # fmt: skip
    cfg = agent.cfg
    if not isinstance(env.action_space, gym.spaces.Discrete):
        raise ValueError(
            f"--env {cfg.env}: expected a Discrete action space, got {env.action_space}"
        )
    info = EnvInfo(cfg.env, env, make_preprocessor(env.observation_space))
    agent.configure(info)
    check_memory(agent, info)
    networks = build_networks(agent, info, run_dir, payload)
    learner = Learner(
        networks, cfg, device, agent.loss(), agent.target_rules(), agent.param_groups(networks)
    )
    ctx = RunContext(cfg, agent, env, info, learner, device, run_dir, None)
    ctx.rng = np.random.default_rng(cfg.seed + 3)
    if payload is not None:
        load_learner(agent, learner, run_dir, payload)
        ctx.counters.load(payload["counters"])
    if getattr(cfg, "gate_episodes", 0):
        ctx.gate = DeployGate(cfg.gate_episodes, cfg.gate_margin, cfg.gate_share, cfg.gate_horizon)
        if payload is not None:
            ctx.gate.load_state_dict(payload, ctx.acting_weights())
    if agent.uses_replay:
        ctx.replay = PrioritizedSequenceReplay(
            cfg.replay_capacity, cfg.priority_alpha, cfg.priority_beta, cfg.priority_eta,
            cfg.seed, "agent replay", kind=cfg.replay_kind,
            uniform_share=cfg.replay_uniform_share,
        )  # fmt: skip
    sources = agent.sources(ctx)
    if ctx.replay is not None:
        sources = [DataSource("agent replay", ctx.replay), *sources]
    if sources:
        beta = None  # prioritized replay's exponent, annealed (--priority-beta-final)
        if isinstance(cfg, ReplayConfig):
            beta = LinearSchedule(cfg.priority_beta, cfg.priority_beta_final,
                                  cfg.priority_beta_steps)  # fmt: skip
        ctx.mix = ReplayMix(sources[0], sources[1:], seed=cfg.seed + 1, beta=beta)
    note = resume_note(ctx, agent, payload) if payload is not None else None
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.json").write_text(
        json.dumps({"algo": agent.name, **config_to_dict(cfg)}, indent=2), encoding="utf-8"
    )
    ctx.logger = RunLogger(run_dir, cfg.tensorboard)
    return ctx, note


def check_memory(agent: Agent, info: EnvInfo) -> None:
    """ValueError naming the flag when the replay buffers, the networks (counted on the meta
    device) and a batch would need more memory than the machine has available. The demo
    files are read for their lengths only when the run does not fit with the demo replay
    counted at --demo-capacity (they are read again when loaded)."""
    params = footprint.meta_parameter_count(lambda: agent.build_networks(info))
    available = footprint.available_memory()

    def parts(count_demos: bool) -> list[footprint.Part]:
        spec, n = info.preprocess.spec, info.num_actions
        return footprint.estimate(agent.cfg, spec, n, params, agent.uses_replay, count_demos)

    try:
        footprint.check_fits(parts(count_demos=False), available)
    except ValueError:
        footprint.check_fits(parts(count_demos=True), available)


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
    run_dir = Path(cfg.run_dir) if cfg.run_dir else default_run_dir(agent.name, cfg)
    problem = run_folder_problem(run_dir)
    if problem is not None:
        raise ValueError(f"--run-dir: {problem}")
    payload = open_run(agent, run_dir, device)
    created = not run_dir.exists()
    env = agent.make_env()
    try:
        ctx, note = _build(agent, env, run_dir, device, payload)
    except BaseException:
        env.close()
        if created:
            shutil.rmtree(run_dir, ignore_errors=True)
        raise
    for line in cfg.warnings():  # once the run has started: never before an error line
        print(f"demostudio: warning: {line}", file=sys.stderr)
    return _Shell(ctx, created).run(note, resumed=payload is not None)


class _Shell:
    def __init__(self, ctx: RunContext, created: bool = False):
        self.ctx = ctx
        self.cfg = ctx.cfg
        self.solved_at: int | None = None
        self.created = created
        """This run made its folder (a failure before the first step removes it)."""

    def write(self, text: str) -> None:
        if self.cfg.progress:
            from tqdm import tqdm

            tqdm.write(text)

    def save(self, path: Path, interrupted: bool = False) -> None:
        """Write a checkpoint; ``interrupted``: the run was stopped before its end (a plain
        bool in the payload, which evaluate, watch and a later ``--resume`` read)."""
        ctx = self.ctx
        save_checkpoint(path, {**checkpoint_payload(ctx), "interrupted": interrupted})
        if getattr(self.cfg, "save_replay", False) and ctx.mix is not None:
            buffers = {b.name: b.state_arrays() for b in ctx.mix.buffers if b.persistent}
            save_replays(ctx.run_dir, ctx.counters.env_steps, buffers)

    def reached_stop(self) -> bool:
        """The mean return of the last ``stop_evals`` evaluations reaches ``stop_return``."""
        stop, window = getattr(self.cfg, "stop_return", None), getattr(self.cfg, "stop_evals", 1)
        recent = [r for _, r in self.ctx.evals[-window:]]
        return stop is not None and len(recent) == window and float(np.mean(recent)) >= stop

    def gate_test(self, clock: int) -> None:
        """The learner's network plays the gate's test episodes (their env steps counted) and
        is deployed if it earns it (:mod:`agents.core.gate`)."""
        ctx, gate = self.ctx, self.ctx.gate
        spent = ctx.counters.gate_steps
        if gate is None or not gate.due(ctx.counters.env_steps, spent):
            return
        seed = gate.test_seed(self.cfg.seed, clock)
        result = evaluate(ctx, gate.episodes, seed, stop=gate.hopeless, horizon=gate.horizon)
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
        ctx, cfg = self.ctx, self.cfg
        env_steps = ctx.counters.env_steps
        deployed = ctx.gate.weights if ctx.gate is not None else None
        result = evaluate(ctx, cfg.eval_episodes, seed=cfg.seed + 10_000 + clock, weights=deployed)
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

        ctx, cfg, sched = self.ctx, self.cfg, phase.schedule

        def clock() -> int:
            return ctx.counters.env_steps if sched.clock == "env_steps" else ctx.learner.updates

        def next_multiple(every: int) -> float:
            return (clock() // every + 1) * every if every > 0 else math.inf

        next_log = next_multiple(phase.log_every)
        next_eval = next_multiple(phase.eval_every)
        next_ckpt = next_multiple(phase.checkpoint_every)
        every_s = 60.0 * getattr(cfg, "checkpoint_minutes", 0.0)  # 0: by env steps only
        ckpt_at = time.monotonic() + every_s if every_s > 0 else math.inf
        since = (time.perf_counter(), ctx.counters.env_steps, ctx.learner.updates)
        unit = "step" if sched.clock == "env_steps" else "upd"
        bar = tqdm(total=sched.total, initial=min(clock(), sched.total), unit=unit, leave=False,
                   desc=f"{ctx.agent.name} {phase.name} {cfg.env}", disable=not cfg.progress,
                   dynamic_ncols=True)  # fmt: skip
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
                    bar.set_postfix_str(
                        f"ret {row.get('episode_return', math.nan):.1f} "
                        f"loss {row.get('loss', math.nan):.3f}"
                    )
                if ctx.agent.after_iteration(ctx):
                    return True
                if now >= next_eval and not sched.done(ctx):  # the end has its own evaluation
                    self.gate_test(now)
                    self.evaluate(now)
                    next_eval = next_multiple(phase.eval_every)
                    if self.reached_stop():
                        self.solved_at = ctx.counters.env_steps
                        return True
                if now >= next_ckpt or time.monotonic() >= ckpt_at:
                    self.save(periodic_path(ctx.run_dir, ctx.counters.env_steps))
                    prune_checkpoints(ctx.run_dir, cfg.keep_checkpoints)
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

    def run(self, note: str | None, resumed: bool) -> TrainResult:
        ctx, cfg, agent = self.ctx, self.cfg, self.ctx.agent
        if note is not None:
            items = len(ctx.replay) if ctx.replay is not None else 0
            ctx.logger.log("resume", ctx.counters.env_steps, note=note, replay_items=items)
            self.write(f"resumed at {ctx.counters.env_steps} env steps; {note}")
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
            ctx.run_dir, ctx.counters.env_steps, ctx.learner.updates, ctx.evals, self.solved_at
        )


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

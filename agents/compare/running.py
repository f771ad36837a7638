"""Running a comparison: every (algorithm, seed) not yet in ``OUT/results.jsonl`` trained
(``jobs`` at a time, in processes of their own) and its final checkpoint evaluated on fresh
episodes, each finished run appended at once; then the table and the learning curves."""

from __future__ import annotations

import json
import multiprocessing
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from agents.compare.plan import (
    build_config,
    check_demo_envs,
    check_run_folder,
    continue_or_clear,
    plan_runs,
    remove_made,
)
from agents.compare.plot import plot_comparison
from agents.compare.records import (
    FINAL_EVAL_SEED,
    RESULTS_FILE,
    RUN_MARKER,
    CompareSettings,
    Reference,
    RunSpec,
    RunSummary,
    read_results,
)
from agents.compare.reference import default_threshold, demo_info, random_return
from agents.compare.table import demo_episodes, write_table
from agents.core.plotting import fmt_return
from agents.core.stopping import check_stop, stop_children, stop_signals


def run_one(spec: RunSpec) -> RunSummary:
    """Train one algorithm/seed, then evaluate its final checkpoint on fresh episodes."""
    from agents.core.evaluate import run_episodes
    from agents.core.logger import read_metrics
    from agents.core.restore import restore_agent
    from agents.registry import get_algorithm

    entry = get_algorithm(spec.algo)
    cfg = build_config(spec)
    run_dir = Path(spec.run_dir)
    marker = run_dir / RUN_MARKER
    made = [p for p in (run_dir.parent, run_dir, marker) if not os.path.lexists(p)]
    run_dir.mkdir(parents=True, exist_ok=True)
    marker.write_text(json.dumps(spec.planned()) + "\n", encoding="utf-8")
    t0 = time.perf_counter()
    try:
        result = entry.train(cfg)
    except BaseException:
        if not os.path.lexists(run_dir / "metrics.jsonl"):  # the run did not start
            remove_made(made)
        raise
    wall = time.perf_counter() - t0
    agent = restore_agent(result.run_dir, "cpu", None, spec.seed)  # as its evaluations played
    env = agent.make_env()
    try:
        final = run_episodes(
            env, agent.controller, spec.final_eval_episodes, FINAL_EVAL_SEED + spec.seed
        )
    finally:
        env.close()
    curve = [
        (int(r["env_steps"]), float(r["eval_return"]))
        for r in read_metrics(result.run_dir)
        if r.get("kind") == "eval" and "eval_return" in r
    ]
    reached = [s for s, ret in curve if ret >= spec.threshold]
    return RunSummary(
        spec.algo,
        spec.seed,
        final.mean,
        min(reached) if reached else None,
        wall,
        result.env_steps,
        result.updates,
        curve,
        str(result.run_dir),
    )


def time_left(walls: dict[str, list[float]], left: Sequence[str], jobs: int) -> str:
    """``", about 3 min left"``: each run still to do costs its algorithm's mean wall time
    so far (else the mean of every run so far), ``jobs`` at a time; empty when none is left."""
    if not left:
        return ""
    every = [w for ws in walls.values() for w in ws]
    mean = {a: sum(ws) / len(ws) for a, ws in walls.items()}
    seconds = sum(mean.get(a, sum(every) / len(every)) for a in left) / max(1, jobs)
    return f", about {_duration(seconds)} left"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def run_comparison(
    cfg: CompareSettings, report: Callable[[str], None] = print
) -> tuple[list[RunSummary], Path, Path]:
    """Run every (algorithm, seed) not already in OUT/results.jsonl (``jobs`` at a time),
    then write the markdown table and the learning-curve PNG; returns (summaries, table,
    png)."""
    counts = {"seeds": cfg.seeds, "budget": cfg.budget, "eval_episodes": cfg.eval_episodes,
              "final_eval_episodes": cfg.final_eval_episodes, "jobs": cfg.jobs}  # fmt: skip
    for name, value in counts.items():
        if value < 1:
            raise ValueError(f"--{name.replace('_', '-')}: expected >= 1, got {value}")
    if not cfg.algos:
        raise ValueError("--algos: expected at least one algorithm, got none")
    demos = demo_info(cfg.demos)
    threshold = cfg.threshold if cfg.threshold is not None else default_threshold(cfg.env, demos)
    if cfg.out.exists() and not cfg.out.is_dir():
        raise ValueError(f"--out {cfg.out}: expected a folder, got a file")
    plan = plan_runs(cfg, threshold)
    check_demo_envs(cfg, plan, demos)
    done = {(r.algo, r.seed) for r in read_results(cfg.out)}
    todo = [s for s in plan if (s.algo, s.seed) not in done]
    for s in todo:
        check_run_folder(Path(s.run_dir), cfg.out)
    made = [p for p in (cfg.out,) if not os.path.lexists(p)]
    cfg.out.mkdir(parents=True, exist_ok=True)
    todo = [continue_or_clear(s, cfg.restart) for s in todo]
    resumed = sum(s.resume for s in todo)
    verb = "s continue" if resumed > 1 else " continues"
    report(
        f"compare {cfg.env}: {len(todo)} runs to do ({len(done)} already done), "
        f"{demo_episodes(len(demos.paths))} (mean return {fmt_return(demos.mean_return)}), "
        f"threshold {threshold:g}"
        + (f"; {resumed} interrupted run{verb} from its latest checkpoint" if resumed else "")
    )

    walls: dict[str, list[float]] = {}
    left = [s.algo for s in todo]

    def record(summary: RunSummary) -> None:
        with (cfg.out / RESULTS_FILE).open("a", encoding="utf-8") as f:
            f.write(json.dumps(summary.to_json()) + "\n")
        hit = summary.steps_to_threshold
        walls.setdefault(summary.algo, []).append(summary.wall_s)
        left.remove(summary.algo)
        report(
            f"  {summary.algo} seed {summary.seed}: final "
            f"{fmt_return(summary.final_return, abs(demos.mean_return))}, "
            f"threshold at {hit if hit is not None else '-'} env steps, {summary.wall_s:.0f} s"
            f" ({len(todo) - len(left)} of {len(todo)} done{time_left(walls, left, cfg.jobs)})"
        )

    try:
        with stop_signals():
            _run_all(todo, cfg.jobs, record)
    except BaseException as exc:
        remove_made(made)  # OUT, when this comparison made it and nothing is in it
        if isinstance(exc, KeyboardInterrupt):
            kept = len(read_results(cfg.out)) if cfg.out.is_dir() else 0
            runs = f"{kept} finished run{'' if kept == 1 else 's'}"
            report(f"compare interrupted: {runs} kept in {cfg.out / RESULTS_FILE}; the same "
                   "command continues with the others")  # fmt: skip
        raise
    summaries = [r for r in read_results(cfg.out) if r.algo in cfg.algos]
    episodes = cfg.final_eval_episodes * cfg.seeds
    ref = Reference(demos.mean_return, random_return(cfg.env, episodes, FINAL_EVAL_SEED))
    shown = fmt_return(ref.random, max(abs(ref.random), abs(ref.demos)))
    report(f"random policy: mean return {shown} over {episodes} episodes")
    table = write_table(cfg, summaries, demos, threshold, ref)
    png = plot_comparison(cfg, summaries, demos, threshold, ref)
    return summaries, table, png


def _run_all(todo: Sequence[RunSpec], jobs: int, record: Callable[[RunSummary], None]) -> None:
    """Train and record each run, ``jobs`` at a time in processes of their own; a stop here
    stops their runs too (each saved, interrupted) before the pool ends."""
    if jobs == 1 or len(todo) <= 1:
        for spec in todo:
            check_stop()  # a stop that came as the last run saved its end
            record(run_one(spec))
        return
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        try:
            for fut in as_completed([pool.submit(run_one, spec) for spec in todo]):
                record(fut.result())
        except KeyboardInterrupt:
            pool.shutdown(wait=False, cancel_futures=True)  # no run starts any more
            stop_children()
            raise


__all__ = ["run_comparison", "run_one", "time_left"]

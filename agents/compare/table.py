"""The comparison's markdown table: a row per algorithm (final return over seeds, env steps
to the threshold, wall time, the agent against the person) and a row per run."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from agents.compare.records import TABLE_FILE, CompareSettings, DemoInfo, Reference, RunSummary
from agents.core.plotting import fmt_return


def demo_episodes(n: int) -> str:
    return f"{n} demo episode{'' if n == 1 else 's'}"


def _scale(summaries: Sequence[RunSummary]) -> float:
    """The largest final return's magnitude: the precision of a table (:func:`fmt_return`)."""
    finite = [abs(r.final_return) for r in summaries if math.isfinite(r.final_return)]
    return max(finite, default=0.0)


def _ratio(x: float) -> str:
    return "-" if not math.isfinite(x) else f"{x:.2f}"


def markdown_table(
    summaries: Sequence[RunSummary],
    algos: Sequence[str],
    threshold: float,
    ref: Reference | None = None,
) -> str:
    """One row per algorithm: final return mean ± std over seeds, env steps to the
    threshold (median of the seeds that reached it, and how many did), wall time; with
    ``ref`` also the share of the demos' return reached and the human-normalised score, of
    the mean final return."""
    extra = " share of demo return | human-normalised |" if ref is not None else ""
    lines = [
        f"| algorithm | seeds | final eval return (mean ± std) | env steps to >= {threshold:g} "
        f"(median, reached) | wall time s (mean) |{extra}",
        "| --- | --- | --- | --- | --- |" + (" --- | --- |" if ref is not None else ""),
    ]
    scale = _scale(summaries)
    for algo in algos:
        rows = [r for r in summaries if r.algo == algo]
        if not rows:
            continue
        finals = np.array([r.final_return for r in rows])
        hits = [r.steps_to_threshold for r in rows if r.steps_to_threshold is not None]
        median = str(int(np.median(hits))) if hits else "-"
        steps = f"{median} ({len(hits)}/{len(rows)})"
        row = (
            f"| {algo} | {len(rows)} | {fmt_return(finals.mean(), scale)} ± "
            f"{fmt_return(finals.std(), scale)} | {steps} "
            f"| {np.mean([r.wall_s for r in rows]):.0f} |"
        )
        if ref is not None:
            share, score = ref.share(finals.mean()), ref.normalised(finals.mean())
            row += f" {_ratio(share)} | {_ratio(score)} |"
        lines.append(row)
    return "\n".join(lines) + "\n"


def write_table(
    cfg: CompareSettings,
    summaries: Sequence[RunSummary],
    demos: DemoInfo,
    threshold: float,
    ref: Reference | None = None,
) -> Path:
    against = ""
    if ref is not None:
        against = (
            f"The agent against the person: share of demo return = final / demos (only for a "
            f"positive demo return); human-normalised = (final - random) / (demos - random), "
            f"random policy mean return {fmt_return(ref.random, abs(ref.demos))} on the final "
            "evaluation's seeds.\n\n"
        )
    head = (
        f"# {cfg.env}: {', '.join(cfg.algos)}\n\n"
        f"{demo_episodes(len(demos.paths))} (mean return {fmt_return(demos.mean_return)}) from "
        f"{', '.join(map(str, cfg.demos))}; budget {cfg.budget} env steps per run; "
        f"final return over {cfg.final_eval_episodes} fresh episodes of the final checkpoint; "
        f"bc learns from the demos only (0 env steps).\n\n{against}"
    )
    seeds = ["", "| algorithm | seed | final | steps to threshold | env steps | updates | wall s |",
             "| --- | --- | --- | --- | --- | --- | --- |"]  # fmt: skip
    scale = _scale(summaries)
    for r in sorted(summaries, key=lambda r: (cfg.algos.index(r.algo), r.seed)):
        hit = "-" if r.steps_to_threshold is None else str(r.steps_to_threshold)
        seeds.append(
            f"| {r.algo} | {r.seed} | {fmt_return(r.final_return, scale)} | {hit} "
            f"| {r.env_steps} "
            f"| {r.updates} | {r.wall_s:.0f} |"
        )
    path = cfg.out / TABLE_FILE
    path.write_text(
        head + markdown_table(summaries, cfg.algos, threshold, ref) + "\n".join(seeds) + "\n",
        encoding="utf-8",
    )
    return path


__all__ = ["demo_episodes", "markdown_table", "write_table"]

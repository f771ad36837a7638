"""The comparison's learning curves: one PNG, every algorithm's mean evaluation return over
its seeds with the demos' returns and the random policy's level."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from agents.compare.records import CURVES_FILE, CompareSettings, DemoInfo, Reference, RunSummary
from agents.compare.table import demo_episodes
from agents.core.plotting import (
    demo_returns,
    draw_demo_band,
    fmt_return,
    legend_below,
    line_style,
)


def plot_comparison(
    cfg: CompareSettings,
    summaries: Sequence[RunSummary],
    demos: DemoInfo,
    threshold: float,
    ref: Reference | None = None,
) -> Path:
    """Mean evaluation return over seeds per algorithm (band: min to max), on a common grid
    of env steps; algorithms that use no env steps (bc) as a dashed level; the demos'
    returns (mean and band, one per player) and the random policy's level."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10.5, 6), dpi=100, layout="constrained")
    grid = np.linspace(0, cfg.budget, 41)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, algo in enumerate(cfg.algos):
        rows = [r for r in summaries if r.algo == algo and r.curve]
        if not rows:
            continue
        color = colors[i % len(colors)]
        if all(r.env_steps == 0 for r in rows):
            level = float(np.mean([r.final_return for r in rows]))
            ax.axhline(level, color=color, ls="--", label=f"{algo} (no env steps)")
            continue
        curves = []
        for r in rows:
            s = np.array([p[0] for p in r.curve], float)
            v = np.array([p[1] for p in r.curve], float)
            c = np.interp(grid, s, v)  # after the run's last evaluation: held at it
            c[grid < s.min()] = np.nan  # before its first evaluation: nothing to show
            curves.append(c)
        arr = np.array(curves)
        shown = ~np.all(np.isnan(arr), axis=0)
        g, arr = grid[shown], arr[:, shown]
        ax.plot(
            g,
            np.nanmean(arr, 0),
            color=color,
            label=f"{algo} ({len(rows)} seed{'' if len(rows) == 1 else 's'})",
            **line_style(i, len(cfg.algos), len(g)),  # equal curves (ppo, rnd-ppo) both show
        )
        if len(rows) > 1:
            ax.fill_between(g, np.nanmin(arr, 0), np.nanmax(arr, 0), color=color, alpha=0.15)
    ax.axhline(threshold, color="gray", ls=":", lw=1, label=f"threshold {threshold:g}")
    groups = demo_returns(demos.paths)
    draw_demo_band(ax, groups, ["black", *colors[len(cfg.algos) :]])
    if ref is not None:
        shown = fmt_return(ref.random, max(abs(ref.random), abs(ref.demos)))
        ax.axhline(ref.random, color="gray", ls="-.", lw=1, label=f"random {shown}")
    ax.set_xlabel("env steps")
    ax.set_ylabel("evaluation return")
    ax.set_title(f"{cfg.env}, {demo_episodes(len(demos.paths))}")
    ax.grid(alpha=0.3)
    # under the axes: with every algorithm, the demos and the references no corner of the
    # plot is free for a dozen entries, and beside it they take half the width
    legend_below(fig, ax)
    path = cfg.out / CURVES_FILE
    fig.savefig(path)
    plt.close(fig)
    return path


__all__ = ["plot_comparison"]

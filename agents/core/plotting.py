"""Learning curves: return vs env steps of one or several runs, drawn into a PNG, with the
demos' returns on the same axes ("the agent against the person")."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from agents.core.logger import iter_metrics
from demostudio.episode import find_episodes, read_summary

METRICS = {"eval_return": "eval", "episode_return": "train", "loss": "train", "sps": "train",
           "gate_worst": "gate"}  # fmt: skip
RETURN_METRICS = ("eval_return", "episode_return")


def fmt_return(x: float, scale: float | None = None) -> str:
    """A return at the precision its scale needs: one decimal from 10 up (CartPole's 475.3),
    three below (MiniGrid's 0.966, where one decimal shows 1.0); ``scale``: the largest
    magnitude among the returns shown together (default: ``|x|``)."""
    if not math.isfinite(x):
        return "nan"
    return f"{x:.{1 if (abs(x) if scale is None else scale) >= 10 else 3}f}"


class DemoReturns(NamedTuple):
    """The returns of one player's demo episodes."""

    player: str
    """The files' player ("" when they name none, e.g. a script's demos)."""
    returns: list[float]

    @property
    def mean(self) -> float:
        return float(np.mean(self.returns))

    @property
    def label(self) -> str:
        who = f"demos of {self.player}" if self.player else "demos"
        n = len(self.returns)
        low, high = min(self.returns), max(self.returns)
        scale = max(abs(low), abs(high))
        spread = f", {fmt_return(low, scale)} to {fmt_return(high, scale)}" if n > 1 else ""
        return f"{who}: mean {fmt_return(self.mean)}{spread} ({n} episode{'' if n == 1 else 's'})"


def demo_returns(demos: Sequence[str | os.PathLike]) -> list[DemoReturns]:
    """The demo episodes' returns under ``demos`` (files or folders), one group per player
    (sorted by name); FileNotFoundError when there are none."""
    paths = find_episodes(list(demos))
    if not paths:
        raise FileNotFoundError(
            f"--demos: expected episode files (*.h5) under {', '.join(map(str, demos))}, got none"
        )
    groups: dict[str, list[float]] = {}
    for p in paths:
        s = read_summary(p)
        groups.setdefault(s.player, []).append(float(s.total_return))
    return [DemoReturns(k, groups[k]) for k in sorted(groups)]


def draw_demo_band(ax, groups: Sequence[DemoReturns], colors: Sequence[str]) -> None:
    """Each player's demo returns across the axes: the mean (dashed) and the min-max band."""
    for i, g in enumerate(groups):
        color = colors[i % len(colors)]
        ax.axhspan(min(g.returns), max(g.returns), color=color, alpha=0.12, lw=0)
        ax.axhline(g.mean, color=color, ls="--", lw=1.2, label=g.label)


MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
DASHES = ((), (6, 2), (3, 1.5, 1, 1.5), (1.5, 1.5))
"""Dash patterns (on, off, ... in line widths): solid, dashed, dash-dot, dotted."""


def line_style(i: int, n: int, points: int) -> dict[str, Any]:
    """``Axes.plot`` keywords for the ``i``-th of ``n`` lines on one axes, so that lines of
    equal values stay told apart: each has its own marker, placed at points staggered from
    the others' (about 8 per line over ``points`` points), its dash pattern lets the lines
    drawn before it show through its gaps, and the width falls from the first line drawn to
    the last, so a line drawn over an equal one leaves its edges showing."""
    every = max(1, points // 8)
    start = (i * max(1, every // max(n, 1))) % every
    width = 1.2 + 1.8 * (n - 1 - i) / max(n - 1, 1)
    dashes = DASHES[(i // len(MARKERS) + i) % len(DASHES)]
    return {"marker": MARKERS[i % len(MARKERS)], "markevery": (start, every), "lw": width,
            "ms": 4.5, "dashes": dashes}  # fmt: skip


def legend_below(fig, ax, columns: int = 3) -> None:
    """The legend under the axes, in up to ``columns`` columns: the plot keeps the figure's
    width however many lines and levels it holds (``fig`` made with ``layout="constrained"``,
    which makes the room)."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside lower center", fontsize=8, frameon=False,
                   ncols=max(1, min(columns, len(labels))))  # fmt: skip


def plot_runs(
    run_dirs: Sequence[Path],
    out: Path,
    metric: str = "eval_return",
    title: str | None = None,
    demos: Sequence[Path] = (),
    note: Callable[[str], None] = lambda text: None,
) -> Path:
    """One line per run (labelled by its folder name), and with ``demos`` the demos' returns
    (:func:`draw_demo_band`, one per player); returns the PNG path. A run whose last start or
    stop in metrics.jsonl is an ``interrupted`` (Ctrl-C) or ``failed`` row, not resumed since,
    is labelled so, and ``note`` is told."""
    if metric not in METRICS:
        raise ValueError(f"--metric: expected one of {sorted(METRICS)}, got {metric!r}")
    if demos and metric not in RETURN_METRICS:
        raise ValueError(
            f"--demos: expected a return metric ({', '.join(RETURN_METRICS)}) to compare the "
            f"demos with, got --metric {metric}"
        )
    groups = demo_returns(demos) if demos else []
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kind = METRICS[metric]
    fig, ax = plt.subplots(figsize=(8, 5), dpi=100, layout="constrained")
    drawn = 0
    runs = list(map(Path, run_dirs))
    for run in runs:
        points = []  # (env steps, value): what is plotted, not the whole rows
        stop = None  # the last interrupted or failed row, when no resume row followed it
        for r in iter_metrics(run):
            if r["kind"] in ("interrupted", "failed", "resume"):
                stop = None if r["kind"] == "resume" else r
            if r["kind"] != kind or metric not in r:
                continue
            if not _is_number(r[metric]):
                raise ValueError(
                    f"{run / 'metrics.jsonl'} [{metric}]: expected numbers, got {r[metric]!r:.60}"
                )
            points.append((r["env_steps"], r[metric]))
        label = run.name
        if stop is not None:
            how, at = stop["kind"], stop["env_steps"]
            label += f" ({how} at {at} env steps)"
            said = "failed" if how == "failed" else "was interrupted"
            note(f"{run}: the run {said} at {at} env steps (not finished)")
        if not points:
            continue
        ax.plot(
            [p[0] for p in points],
            [p[1] for p in points],
            label=label,
            **line_style(drawn, len(runs), len(points)),
        )
        drawn += 1
    if drawn == 0:
        plt.close(fig)
        raise ValueError(
            f"expected {metric} rows in the metrics.jsonl of {[str(r) for r in run_dirs]}, got none"
        )
    # the demos' colours continue the runs' colour cycle
    cycle = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
    draw_demo_band(ax, groups, cycle[drawn:] + cycle[:drawn])
    ax.set_xlabel("env steps")
    ax.set_ylabel(metric.replace("_", " "))
    ax.set_title(title or f"{metric.replace('_', ' ')} vs env steps")
    ax.grid(alpha=0.3)
    legend_below(fig, ax, columns=2)
    if out.is_dir():
        plt.close(fig)
        raise ValueError(f"--out {out}: expected a PNG file path, got a folder")
    if not out.suffix:  # matplotlib adds .png: say where it went
        out = out.with_suffix(".png")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(out)
    except OSError as exc:
        raise ValueError(
            f"--out {out}: expected a PNG file path, cannot write it ({exc.strerror or exc})"
        ) from None
    finally:
        plt.close(fig)
    return out


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


__all__ = [
    "DASHES",
    "MARKERS",
    "RETURN_METRICS",
    "DemoReturns",
    "demo_returns",
    "draw_demo_band",
    "legend_below",
    "line_style",
    "plot_runs",
]

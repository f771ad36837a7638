"""Learning curves: return vs env steps of one or several runs, drawn into a PNG, with the
demos' returns on the same axes ("the agent against the person")."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

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
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    drawn = 0
    for run in map(Path, run_dirs):
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
            marker="." if kind == "eval" else None,
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
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
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


__all__ = ["RETURN_METRICS", "DemoReturns", "demo_returns", "draw_demo_band", "plot_runs"]

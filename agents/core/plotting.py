"""Learning curves: return vs env steps of one or several runs, drawn into a PNG."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agents.core.logger import read_metrics

METRICS = {"eval_return": "eval", "episode_return": "train", "loss": "train", "sps": "train"}


def plot_runs(
    run_dirs: Sequence[Path], out: Path, metric: str = "eval_return", title: str | None = None
) -> Path:
    """One line per run (labelled by its folder name); returns the PNG path."""
    if metric not in METRICS:
        raise ValueError(f"--metric: expected one of {sorted(METRICS)}, got {metric!r}")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kind = METRICS[metric]
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    drawn = 0
    for run in map(Path, run_dirs):
        rows = [r for r in read_metrics(run) if r.get("kind") == kind and metric in r]
        if not rows:
            continue
        ax.plot(
            [r["env_steps"] for r in rows],
            [r[metric] for r in rows],
            label=run.name,
            marker="." if kind == "eval" else None,
        )
        drawn += 1
    if drawn == 0:
        plt.close(fig)
        raise ValueError(
            f"expected {metric} rows in the metrics.jsonl of {[str(r) for r in run_dirs]}, got none"
        )
    ax.set_xlabel("env steps")
    ax.set_ylabel(metric.replace("_", " "))
    ax.set_title(title or f"{metric.replace('_', ' ')} vs env steps")
    ax.grid(alpha=0.3)
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    plt.close(fig)
    return out


__all__ = ["plot_runs"]

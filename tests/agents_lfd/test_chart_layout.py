"""The comparison chart and ``plot``: the legend sits under the axes, so the plot keeps the
figure's width however many lines it holds, and lines of equal values stay told apart (ppo
drawn under an rnd-ppo curve of the same returns)."""

from __future__ import annotations

import types
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.colors
import matplotlib.image
import matplotlib.pyplot as plt
import numpy as np

from agents.compare import DemoInfo, Reference, RunSummary, plot_comparison
from agents.core.plotting import legend_below, line_style

ROOT = Path(__file__).resolve().parents[2]
ALGOS = ("r2d3", "r2d2", "dqfd", "sqil", "bc", "ppo", "rnd-ppo", "reactor")


def test_equal_lines_differ_in_marker_place_and_width():
    styles = [line_style(i, len(ALGOS), 41) for i in range(len(ALGOS))]
    assert len({s["marker"] for s in styles}) == len(ALGOS)
    widths = [s["lw"] for s in styles]
    assert widths == sorted(widths, reverse=True) and widths[0] - widths[-1] >= 1.5
    ppo, rnd = styles[ALGOS.index("ppo")], styles[ALGOS.index("rnd-ppo")]
    assert ppo["markevery"] != rnd["markevery"]


def test_the_legend_is_under_the_axes_and_as_wide_as_it_needs():
    fig, ax = plt.subplots(figsize=(10.5, 6), dpi=100, layout="constrained")
    for i, name in enumerate(ALGOS):
        ax.plot(range(41), np.full(41, 9.0), label=f"{name} (3 seeds)", **line_style(i, 8, 41))
    legend_below(fig, ax)
    fig.canvas.draw()
    axes, legend = ax.get_window_extent(), fig.legends[0].get_window_extent()
    assert legend.y1 <= axes.y0  # below the axes, not beside them
    assert axes.width >= 0.85 * fig.bbox.width  # the plot keeps the figure's width
    plt.close(fig)


def test_compare_chart_shows_an_equal_curve_drawn_under_another(tmp_path):
    demos = sorted((ROOT / "demos" / "CartPole-v1").glob("*.h5"))
    cfg = types.SimpleNamespace(env="CartPole-v1", budget=20_000, out=tmp_path, algos=ALGOS)
    steps = range(0, 20_001, 2_000)
    summaries = []
    for algo in ALGOS:
        level = 480.0 if algo == "bc" else (9.0 if "ppo" in algo else 200.0 + 10 * len(algo))
        curve = [(0, level)] if algo == "bc" else [(s, level) for s in steps]
        summaries.append(RunSummary(algo, 0, level, None, 1.0, 0 if algo == "bc" else 20_000,
                                    10, curve, ""))  # fmt: skip
    png = plot_comparison(cfg, summaries, DemoInfo(demos, 500.0), 475.0, Reference(500.0, 22.0))
    pixels = (matplotlib.image.imread(png)[..., :3] * 255).round()
    width = pixels.shape[1]
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    brown, pink = (np.array(matplotlib.colors.to_rgb(cycle[ALGOS.index(a)])) * 255
                   for a in ("ppo", "rnd-ppo"))  # fmt: skip
    # the rows of the two equal curves: those with the most pink across the plot's middle
    middle = pixels[:, int(width * 0.15) : int(width * 0.6)]
    near_pink = np.linalg.norm(middle - pink, axis=-1) < 60
    line = int(np.argmax(near_pink.sum(axis=1)))
    band = middle[line - 5 : line + 6]
    assert near_pink[line].sum() > 0.2 * band.shape[1]  # rnd-ppo's curve, drawn on top
    # ppo's curve under it shows along the whole line, not only in the legend
    near_brown = np.linalg.norm(band - brown, axis=-1) < 60
    columns = np.flatnonzero(near_brown.any(axis=0))
    assert columns.size > 0.15 * band.shape[1] and np.ptp(columns) > 0.8 * band.shape[1]

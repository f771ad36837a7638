"""A run's learning curve drawn with pygame: the evaluation return (dots and line), the
training return, and the demos' returns as ``demostudio plot --demos`` draws them (per player,
the min-max band and the dashed mean), on axes in env steps (updates for BC). Also a small
version without axes for the runs list. Lines only: no plotting library in the window's
thread."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import pygame

from demostudio.ui import theme

EVAL_COLOR = theme.ACCENT
TRAIN_COLOR = (120, 180, 130)
DEMO_COLOR = theme.WARN


class Band(NamedTuple):
    """One player's demo returns."""

    low: float
    high: float
    mean: float
    label: str


def demo_bands(demos: Sequence[str]) -> tuple[list[Band], str]:
    """The bands of the demo files and folders a run trained on (its config's ``--demos``),
    read as ``plot --demos`` reads them; ([], why) when they cannot be read (moved, gone)."""
    if not demos:
        return [], ""
    from agents.core.plotting import demo_returns  # numpy and the episode reader: no torch
    from demostudio.episode import EpisodeError

    try:
        groups = demo_returns(list(demos))
    except (EpisodeError, FileNotFoundError, OSError, ValueError) as exc:
        return [], f"demos' band left out: {exc}"
    return [Band(min(g.returns), max(g.returns), g.mean, g.label) for g in groups], ""


def nice_step(span: float, ticks: int = 4) -> float:
    """A round tick spacing (1, 2 or 5 times a power of ten) giving about ``ticks`` ticks."""
    if not span > 0 or not math.isfinite(span):
        return 1.0
    raw = span / ticks
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


def steps_text(x: float) -> str:
    """``0``, ``500``, ``20k``, ``1.5M``."""
    if abs(x) >= 1e6:
        return f"{x / 1e6:g}M"
    if abs(x) >= 1e3:
        return f"{x / 1e3:g}k"
    return f"{x:g}"


def return_text(y: float, scale: float) -> str:
    """A return at the precision its scale needs (as ``plot`` labels it)."""
    return f"{y:.{0 if scale >= 100 else 1 if scale >= 10 else 2}f}"


def _ranges(evals, train, bands, x_max: float) -> tuple[float, float, float, float]:
    xs = [x for x, _ in (*evals, *train)]
    ys = [y for _, y in (*evals, *train)] + [v for b in bands for v in (b.low, b.high)]
    hi_x = max([x_max, *xs, 1.0])
    if not ys:
        return 0.0, hi_x, 0.0, 1.0
    lo, hi = min(ys), max(ys)
    pad = (hi - lo) * 0.08 or max(abs(hi) * 0.1, 1.0)
    return 0.0, hi_x, lo - pad, hi + pad


def draw_curve(
    surface: pygame.Surface,
    rect: pygame.Rect,
    evals: Sequence[tuple[int, float]],
    train: Sequence[tuple[int, float]],
    bands: Sequence[Band] = (),
    x_max: float = 0.0,
    *,
    axes: bool = True,
    x_label: str = "env steps",
) -> None:
    """The curve in ``rect`` (with ``axes``: ticks, labels and a legend inside it)."""
    rect = pygame.Rect(rect)
    plot = rect.inflate(-4, -4)
    if axes:
        plot = pygame.Rect(rect.left + 56, rect.top + 10, rect.width - 68, rect.height - 42)
    x0, x1, y0, y1 = _ranges(evals, train, bands, x_max)

    def at(x: float, y: float) -> tuple[int, int]:
        px = plot.left + (x - x0) / (x1 - x0) * plot.width
        py = plot.bottom - (y - y0) / (y1 - y0) * plot.height
        return round(px), round(py)

    pygame.draw.rect(surface, theme.BACKGROUND, rect, border_radius=4)
    if axes:
        _axes(surface, plot, (x0, x1, y0, y1), at, x_label)
    clip = surface.get_clip()
    surface.set_clip(plot.inflate(2, 2))
    for band in bands:
        top, bottom = at(0, band.high)[1], at(0, band.low)[1]
        shade = pygame.Surface((plot.width, max(1, bottom - top)), pygame.SRCALPHA)
        shade.fill((*DEMO_COLOR, 40))
        surface.blit(shade, (plot.left, top))
        _dashed(surface, DEMO_COLOR, at(x0, band.mean), at(x1, band.mean))
    if len(train) > 1:
        pygame.draw.aalines(surface, TRAIN_COLOR, False, [at(x, y) for x, y in train])
    elif train:
        pygame.draw.circle(surface, TRAIN_COLOR, at(*train[0]), 2)
    points = [at(x, y) for x, y in evals]
    if len(points) > 1:
        pygame.draw.lines(surface, EVAL_COLOR, False, points, 2)
    for i, p in enumerate(points):
        if axes or i == len(points) - 1:
            pygame.draw.circle(surface, EVAL_COLOR, p, 3 if axes else 2)
    surface.set_clip(clip)


def _axes(surface, plot: pygame.Rect, ranges, at, x_label: str) -> None:
    x0, x1, y0, y1 = ranges
    pygame.draw.rect(surface, theme.PANEL, plot)
    scale = max(abs(y0), abs(y1))
    step = nice_step(y1 - y0)
    y = math.ceil(y0 / step) * step
    while y <= y1:
        py = at(x0, y)[1]
        pygame.draw.line(surface, theme.PANEL_LIGHT, (plot.left, py), (plot.right, py))
        theme.draw_text(
            surface,
            return_text(y, scale),
            (plot.left - 6, py),
            11,
            theme.TEXT_DIM,
            anchor="midright",
        )
        y += step
    step = nice_step(x1 - x0, 5)
    x = 0.0
    while x <= x1 + 1e-9:
        px = at(x, y0)[0]
        pygame.draw.line(surface, theme.PANEL_LIGHT, (px, plot.top), (px, plot.bottom))
        theme.draw_text(
            surface, steps_text(x), (px, plot.bottom + 4), 11, theme.TEXT_DIM, anchor="midtop"
        )
        x += step
    theme.draw_text(
        surface, x_label, (plot.right, plot.bottom + 17), 11, theme.TEXT_DIM, anchor="topright"
    )


def draw_legend(
    surface: pygame.Surface,
    pos: tuple[int, int],
    width: int,
    evals: Sequence[tuple[int, float]],
    train: Sequence[tuple[int, float]],
    bands: Sequence[Band] = (),
) -> int:
    """What each line of :func:`draw_curve` is, from ``pos`` down; returns the y below."""
    from demostudio.ui.text import wrap_at_spaces

    entries = [
        (
            EVAL_COLOR,
            f"evaluation return ({len(evals)} so far)" if evals else "evaluation return: none yet",
            False,
        ),
        (TRAIN_COLOR, "training episodes' return" if train else "training return: none yet", False),
        *((DEMO_COLOR, b.label, True) for b in bands),
    ]
    x, y = pos
    font = theme.font(12)
    for color, text, dashed in entries:
        start, end = (x, y + 8), (x + 20, y + 8)
        if dashed:
            _dashed(surface, color, start, end, dash=5)
        else:
            pygame.draw.line(surface, color, start, end, 2)
        for line in wrap_at_spaces(text, font, width - 28, 2):
            theme.draw_text(surface, line, (x + 28, y), 12, theme.TEXT)
            y += font.get_linesize()
        y += 3
    return y


def _dashed(surface, color, start, end, dash: int = 7) -> None:
    (xa, ya), (xb, yb) = start, end
    length = max(1.0, math.hypot(xb - xa, yb - ya))
    n = int(length // dash)
    for i in range(0, n, 2):
        t0, t1 = i / n, min(1.0, (i + 1) / n)
        a = (xa + (xb - xa) * t0, ya + (yb - ya) * t0)
        b = (xa + (xb - xa) * t1, ya + (yb - ya) * t1)
        pygame.draw.line(surface, color, a, b, 1)


__all__ = ["Band", "demo_bands", "draw_curve", "draw_legend", "nice_step", "steps_text"]

"""Drawing an opened run: its live curve (evaluation and training return, the demos' band),
its facts, the buttons (stop, resume, watch, coach, evaluate, folder: each a ``demostudio``
command), the command its process runs, and the last lines it printed."""

from __future__ import annotations

import pygame

from demostudio.launcher.commands import shown, words_of
from demostudio.launcher.curve import draw_curve, draw_legend
from demostudio.launcher.estimate import duration, remaining_seconds
from demostudio.launcher.runs import RunRow
from demostudio.launcher.train_panel import RUN_KEYS, TrainLayout, TrainState
from demostudio.launcher.train_view import PAD, button, chip, fit, lines
from demostudio.ui import theme

KEYS = {action: key.upper() for key, action in RUN_KEYS.items()}
LABELS = {
    "stop": "Stop",
    "resume": "Resume",
    "watch": "Watch",
    "coach": "Coach",
    "evaluate": "Evaluate",
    "folder": "Run folder",
}
COLORS = {"stop": theme.BAD, "watch": theme.GOOD, "coach": theme.GOOD}
INFO_W = 280


def enabled(state: TrainState, row: RunRow) -> dict[str, bool]:
    """Which buttons apply to ``row`` now (the controller checks again and says why not)."""
    info = next((a for a in state.algos if a.name == row.algo), None)
    idle = not row.active
    has_ckpt = row.checkpoint is not None
    return {
        "stop": row.active and row.process is not None,
        "resume": idle and has_ckpt and info is not None and info.resumable,
        "watch": has_ckpt,
        "coach": idle and info is not None and info.coachable,
        "evaluate": has_ckpt,
        "folder": True,
    }


def draw(surface: pygame.Surface, state: TrainState, lay: TrainLayout) -> None:
    w, h = surface.get_size()
    surface.fill(theme.BACKGROUND)
    row = state.opened_run
    button(surface, lay.back, "Back", "Esc", theme.PANEL_LIGHT)
    if row is None:
        theme.draw_text(surface, f"{state.opened}: reading it…", (PAD, 20), 14, theme.TEXT_DIM)
        return
    head = theme.draw_text(
        surface, f"{row.algo} on {state.title}", (PAD, 14), 24, theme.TEXT, bold=True
    )
    chip(surface, row.status, (head.right + 12, head.centery), anchor="midleft")
    theme.draw_text(
        surface,
        fit(str(row.path), lay.back.left - PAD - 10, 11, mono=True),
        (PAD, 46),
        11,
        theme.TEXT_DIM,
        mono=True,
    )
    top = 70
    bottom = lay.buttons["stop"].top - 14
    curve = pygame.Rect(PAD, top, w - 3 * PAD - INFO_W, bottom - top)
    bands, why, _ = state.bands.get(row.path, ([], "", ()))
    x_label = "env steps" if row.clock == "env_steps" else "learner updates"
    draw_curve(
        surface,
        curve,
        row.progress.evals,
        row.progress.train,
        bands,
        row.budget or 0,
        x_label=x_label,
    )
    if why:
        theme.draw_text(
            surface,
            fit(why, curve.width - 70, 11),
            (curve.left + 56, curve.bottom - 14),
            11,
            theme.WARN,
        )
    box = pygame.Rect(curve.right + PAD, top, INFO_W, bottom - top)
    y = _facts(surface, state, row, box)
    draw_legend(
        surface,
        (box.left + 12, max(y + 10, box.bottom - 110)),
        box.width - 24,
        row.progress.evals,
        row.progress.train,
        bands,
    )
    on = enabled(state, row)
    for name, rect in lay.buttons.items():
        button(surface, rect, LABELS[name], KEYS[name], COLORS.get(name, theme.ACCENT), on[name])
    y = lay.buttons["stop"].bottom + 12
    command = (
        shown(words_of(row.process.command))
        if row.process is not None
        else "started outside the launcher (no process.json)"
    )
    label = theme.draw_text(surface, "Ctrl+C copies:", (PAD, y), 11, theme.TEXT_DIM)
    x = label.right + 8
    y = lines(surface, command, (x, y), w - PAD - x, 11, theme.TEXT, mono=True, most=2)
    for text in state.console[-3:]:
        theme.draw_text(
            surface,
            fit(text, w - 2 * PAD, 10, mono=True),
            (PAD, y + 2),
            10,
            theme.TEXT_DIM,
            mono=True,
        )
        y += 14
    if state.status:
        color = theme.BAD if state.status_error else theme.TEXT
        lines(surface, state.status, (PAD, h - 26), w - 2 * PAD, 12, color, most=1)


def _facts(surface, state: TrainState, row: RunRow, box: pygame.Rect) -> int:
    """The run's numbers in ``box``; returns the y below them."""
    pygame.draw.rect(surface, theme.PANEL, box, border_radius=4)
    x, y, width = box.left + 12, box.top + 10, box.width - 24
    p = row.progress
    unit = "env steps" if row.clock == "env_steps" else "updates"
    if row.budget:
        bar = pygame.Rect(x, y, width, 8)
        pygame.draw.rect(surface, theme.PANEL_LIGHT, bar, border_radius=4)
        filled = bar.copy()
        filled.width = max(0, min(width, round(width * row.done / row.budget)))
        pygame.draw.rect(surface, theme.ACCENT, filled, border_radius=4)
        y += 16
    done = f"{row.done:,}" + (f" of {row.budget:,}" if row.budget else "") + f" {unit}"
    facts = [
        (done, theme.TEXT),
        (f"{p.updates:,} learner updates", theme.TEXT_DIM),
        (f"best eval {p.best_eval:.2f}" if p.evals else "no evaluation yet", theme.TEXT),
        (f"last eval {p.last_eval:.2f}" if p.evals else "", theme.TEXT),
        (f"{duration(p.wall_seconds)} of training" if p.wall_seconds else "", theme.TEXT_DIM),
    ]
    rate = p.rate("train")
    if rate:
        facts.append((f"{rate:,.0f} {unit}/s", theme.TEXT_DIM))
    left = remaining_seconds(row) if row.status == "running" else None
    if left is not None:
        facts.append((f"≈ {duration(left)} left", theme.TEXT))
    ckpt = row.checkpoint.name if row.checkpoint else "no checkpoint yet"
    facts.append((f"checkpoint: {ckpt}", theme.TEXT_DIM))
    for text, color in facts:
        if text:
            theme.draw_text(surface, fit(text, width, 13), (x, y), 13, color)
            y += 20
    if row.reason:
        y = lines(
            surface,
            row.reason,
            (x, y + 4),
            width,
            12,
            theme.BAD if row.status == "failed" else theme.WARN,
            most=5,
        )
    note = state.notes.get(row.path)
    if note:
        y = lines(surface, note, (x, y + 6), width, 12, theme.TEXT, most=4)
    return y


__all__ = ["draw", "enabled"]

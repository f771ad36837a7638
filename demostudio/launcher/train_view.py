"""Drawing the Train panel's setup view: the recordings that will be used, the algorithms with
when to pick each, the budget and its estimated duration, the command Start runs, and the
game's runs (status, progress, evaluations, time and a small curve each)."""

from __future__ import annotations

import pygame

from demostudio.launcher.curve import draw_curve
from demostudio.launcher.estimate import duration, remaining_seconds
from demostudio.launcher.runs import RunRow
from demostudio.launcher.train_panel import TrainFocus, TrainLayout, TrainState
from demostudio.ui import theme
from demostudio.ui.text import wrap_at_spaces

TRAIN_SIZE = (1040, 680)
"""The window while the panel is open (shrunk to the desktop when smaller)."""
PAD = 20
ALGO_TOP = 170
ALGO_ROW_H = 32
RUNS_TOP = 92
RUN_ROW_H = 60
BUTTONS = ("stop", "resume", "watch", "coach", "evaluate", "folder")

STATUS_COLORS = {
    "starting": theme.WARN,
    "running": theme.ACCENT,
    "stopping": theme.WARN,
    "finished": theme.GOOD,
    "stopped": theme.TEXT_DIM,
    "interrupted": theme.WARN,
    "failed": theme.BAD,
}


def layout(size: tuple[int, int], state: TrainState) -> TrainLayout:
    w, h = size
    left_w = int((w - 3 * PAD) * 0.53)
    right_x = 2 * PAD + left_w
    right_w = w - right_x - PAD
    rows = max(len(state.algos), 8)
    budget_y = ALGO_TOP + rows * ALGO_ROW_H + 44
    n_runs = max(1, (h - RUNS_TOP - PAD) // RUN_ROW_H)
    bw = (w - 2 * PAD - (len(BUTTONS) - 1) * 10) // len(BUTTONS)
    return TrainLayout(
        back=pygame.Rect(w - PAD - 120, 18, 120, 30),
        algo_rows=[
            pygame.Rect(PAD, ALGO_TOP + i * ALGO_ROW_H, left_w, ALGO_ROW_H - 2)
            for i in range(len(state.algos))
        ],
        include_box=pygame.Rect(PAD + left_w - 250, 70, 250, 20),
        budget_minus=pygame.Rect(PAD, budget_y, 30, 30),
        budget_plus=pygame.Rect(PAD + 210, budget_y, 30, 30),
        start=pygame.Rect(PAD, h - 98, left_w, 42),
        run_rows=[
            pygame.Rect(right_x, RUNS_TOP + i * RUN_ROW_H, right_w, RUN_ROW_H - 4)
            for i in range(n_runs)
        ],
        buttons={
            name: pygame.Rect(PAD + i * (bw + 10), h - 190, bw, 44)
            for i, name in enumerate(BUTTONS)
        },
    )


def button(surface, rect, label, sub="", color=theme.ACCENT, enabled=True) -> None:
    plain = color == theme.PANEL_LIGHT  # a quiet button (Back): light text on grey
    color = color if enabled else theme.PANEL
    ink = theme.TEXT if plain else theme.BACKGROUND if enabled else theme.TEXT_DIM
    pygame.draw.rect(surface, color, rect, border_radius=6)
    dy = 7 if sub else 0
    theme.draw_text(
        surface, label, (rect.centerx, rect.centery - dy), 16, ink, bold=True, anchor="center"
    )
    if sub:
        theme.draw_text(surface, sub, (rect.centerx, rect.centery + 11), 11, ink, anchor="center")


def chip(surface, status: str, pos: tuple[int, int], anchor: str = "topright") -> pygame.Rect:
    """The status word on its colour."""
    color = STATUS_COLORS.get(status, theme.TEXT_DIM)
    img = theme.font(11, bold=True).render(status, True, theme.BACKGROUND)
    rect = pygame.Rect(0, 0, img.get_width() + 12, img.get_height() + 4)
    setattr(rect, anchor, pos)
    pygame.draw.rect(surface, color, rect, border_radius=8)
    surface.blit(img, img.get_rect(center=rect.center))
    return rect


def fit(text: str, width: int, size: int, mono: bool = False) -> str:
    """``text`` cut with an ellipsis at the end to fit ``width`` pixels."""
    font = theme.font(size, mono=mono)
    if font.size(text)[0] <= width:
        return text
    while len(text) > 1 and font.size(text + "…")[0] > width:
        text = text[:-1]
    return text + "…"


def lines(surface, text, pos, width, size=12, color=theme.TEXT, mono=False, most=3) -> int:
    """``text`` wrapped into ``width`` (at most ``most`` lines, the last cut); the y below."""
    font = theme.font(size, mono=mono)
    x, y = pos
    for line in wrap_at_spaces(text, font, width, most):
        theme.draw_text(surface, fit(line, width, size, mono), (x, y), size, color, mono=mono)
        y += font.get_linesize()
    return y


def count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def draw(surface: pygame.Surface, state: TrainState, lay: TrainLayout) -> None:
    """The setup view and the runs list."""
    surface.fill(theme.BACKGROUND)
    theme.draw_text(surface, "Train an agent", (PAD, 14), 26, theme.TEXT, bold=True)
    theme.draw_text(
        surface,
        f"{state.title} · {state.env_id} · Tab algorithms/budget/runs · ↑/↓ pick · ←/→ budget"
        " · Enter start · Ctrl+C copies the command",
        (PAD, 46),
        12,
        theme.TEXT_DIM,
    )
    button(surface, lay.back, "Back", "Esc", theme.PANEL_LIGHT)
    left_w = lay.start.width
    _recordings(surface, state, lay, left_w)
    _algorithms(surface, state, lay, left_w)
    _budget(surface, state, lay, left_w)
    info = state.info
    ready = info is not None and info.usable(state.have_demos)
    button(surface, lay.start, "Start training", "Enter", theme.GOOD, enabled=ready)
    _status(surface, state, (PAD, lay.start.bottom + 10), left_w)
    _runs(surface, state, lay)


def _recordings(surface, state: TrainState, lay: TrainLayout, width: int) -> None:
    theme.draw_text(surface, "Recordings used", (PAD, 70), 14, theme.TEXT)
    demos = state.demos
    if demos is None:
        theme.draw_text(surface, "reading the recordings…", (PAD, 90), 12, theme.TEXT_DIM)
        return
    totals = demos.totals(state.include_left_out)
    if not demos.files:
        text = "none yet: play and record the game first; the algorithms that need demos wait"
        lines(surface, text, (PAD, 90), width, 12, theme.WARN, most=2)
        return
    players = ", ".join(f"{p or 'unnamed'} ({n})" for p, n in totals.players.items()) or "none"
    theme.draw_text(
        surface,
        fit(
            f"{count(totals.episodes, 'episode')} · {count(totals.steps, 'step')} · "
            f"players: {players} · a person's steps: {totals.person_share:.0%}",
            width,
            12,
        ),
        (PAD, 90),
        12,
        theme.TEXT,
    )
    left = demos.left_out
    if left:
        kinds: dict[str, int] = {}
        for f in left:
            kinds[f.left_out] = kinds.get(f.left_out, 0) + 1
        why = ", ".join(f"{n} {k}" for k, n in kinds.items())
        verb = "included" if state.include_left_out else "left out"
        text = f"{count(len(left), 'file')} {verb}: {why}"
        theme.draw_text(
            surface,
            fit(text, width, 12),
            (PAD, 106),
            12,
            theme.TEXT if state.include_left_out else theme.WARN,
        )
        box = pygame.Rect(lay.include_box.left, lay.include_box.top + 3, 14, 14)
        pygame.draw.rect(surface, theme.TEXT_DIM, box, width=1, border_radius=2)
        if state.include_left_out:
            pygame.draw.rect(surface, theme.ACCENT, box.inflate(-4, -4), border_radius=2)
        theme.draw_text(
            surface, "include the files left out (I)", (box.right + 6, box.top - 1), 12, theme.TEXT
        )
    else:
        theme.draw_text(
            surface,
            "nothing left out: no file tagged bad or flagged by quality",
            (PAD, 106),
            12,
            theme.TEXT_DIM,
        )
    if demos.unreadable:
        text = f"{count(len(demos.unreadable), 'unreadable file')} never used: " + ", ".join(
            f.path.name for f in demos.unreadable
        )
        theme.draw_text(surface, fit(text, width, 11), (PAD, 124), 11, theme.BAD)


def _algorithms(surface, state: TrainState, lay: TrainLayout, width: int) -> None:
    focused = state.focus is TrainFocus.ALGOS
    theme.draw_text(
        surface, "Algorithm", (PAD, ALGO_TOP - 22), 14, theme.ACCENT if focused else theme.TEXT
    )
    if not state.algos:
        theme.draw_text(surface, "reading the algorithms…", (PAD, ALGO_TOP + 4), 12, theme.TEXT_DIM)
        return
    for info, rect in zip(state.algos, lay.algo_rows):
        selected = info.name == state.algo
        usable = info.usable(state.have_demos)
        if selected:
            pygame.draw.rect(surface, theme.PANEL_LIGHT, rect, border_radius=4)
            if focused:
                pygame.draw.rect(surface, theme.ACCENT, rect, width=1, border_radius=4)
        ink = theme.TEXT if usable else theme.TEXT_DIM
        theme.draw_text(surface, info.name, (rect.left + 10, rect.top + 2), 14, ink, bold=True)
        need = {"required": "needs demos", "optional": "demos optional", "none": "no demos"}
        tag = need[info.demos] + ("" if usable else ": none to use")
        theme.draw_text(
            surface,
            tag,
            (rect.right - 8, rect.top + 3),
            11,
            theme.TEXT_DIM if usable else theme.WARN,
            anchor="topright",
        )
        theme.draw_text(
            surface,
            fit(info.when, rect.width - 20, 11),
            (rect.left + 10, rect.top + 18),
            11,
            theme.TEXT_DIM,
        )
    info = state.info
    if info is not None:
        y = ALGO_TOP + max(len(state.algos), 8) * ALGO_ROW_H + 2
        theme.draw_text(
            surface, fit(f"{info.name}: {info.summary}", width, 12), (PAD, y), 12, theme.TEXT
        )


def _budget(surface, state: TrainState, lay: TrainLayout, width: int) -> None:
    info = state.info
    minus, plus = lay.budget_minus, lay.budget_plus
    focused = state.focus is TrainFocus.BUDGET
    theme.draw_text(
        surface, "Budget", (PAD, minus.top - 20), 14, theme.ACCENT if focused else theme.TEXT
    )
    if info is None:
        return
    for rect, sign in ((minus, "−"), (plus, "+")):
        pygame.draw.rect(surface, theme.PANEL_LIGHT, rect, border_radius=4)
        theme.draw_text(surface, sign, rect.center, 18, theme.TEXT, bold=True, anchor="center")
    unit = "env steps" if info.clock == "env_steps" else "updates"
    value = pygame.Rect(minus.right + 4, minus.top, plus.left - minus.right - 8, minus.height)
    if focused:
        pygame.draw.rect(surface, theme.ACCENT, value, width=1, border_radius=4)
    theme.draw_text(
        surface, f"{state.budget:,} {unit}", value.center, 14, theme.TEXT, anchor="center"
    )
    x, y = plus.right + 14, minus.top
    room = PAD + width - x
    est = state.estimate
    if est is not None and est.seconds is not None:
        theme.draw_text(
            surface,
            f"≈ {duration(est.seconds)} on this machine",
            (x, y - 1),
            15,
            theme.TEXT,
            bold=True,
        )
        rate = f"{est.rate:,.0f} {unit}/s" if est.rate >= 10 else f"{est.rate:.2g} {unit}/s"
        lines(
            surface,
            f"at {rate}, measured in {est.source}",
            (x, y + 18),
            room,
            11,
            theme.TEXT_DIM,
            most=2,
        )
    else:
        lines(
            surface,
            state.measuring or "no speed measured yet",
            (x, y),
            room,
            11,
            theme.TEXT_DIM,
            most=2,
        )
    y = minus.bottom + 16
    theme.draw_text(surface, "Start runs:", (PAD, y), 11, theme.TEXT_DIM)
    lines(surface, state.preview, (PAD + 70, y), width - 70, 11, theme.TEXT, mono=True, most=4)


def _status(surface, state: TrainState, pos: tuple[int, int], width: int) -> None:
    if state.status:
        color = theme.BAD if state.status_error else theme.TEXT
        lines(surface, state.status, pos, width, 12, color, most=3)


def _runs(surface, state: TrainState, lay: TrainLayout) -> None:
    if not lay.run_rows:
        return
    x = lay.run_rows[0].left
    focused = state.focus is TrainFocus.RUNS
    theme.draw_text(
        surface,
        f"Runs of {state.title}",
        (x, RUNS_TOP - 22),
        14,
        theme.ACCENT if focused else theme.TEXT,
    )
    if not state.runs:
        text = "none yet: Start trains one (runs of `demostudio train` in ./runs show here too)"
        lines(surface, text, (x, RUNS_TOP + 4), lay.run_rows[0].width, 12, theme.TEXT_DIM)
        return
    shown = state.runs[state.run_scroll : state.run_scroll + len(lay.run_rows)]
    right = lay.run_rows[0].right
    theme.draw_text(
        surface,
        f"{len(state.runs)} · Enter opens",
        (right, RUNS_TOP - 20),
        11,
        theme.TEXT_DIM,
        anchor="topright",
    )
    for i, (row, rect) in enumerate(zip(shown, lay.run_rows)):
        selected = state.run_scroll + i == state.run_index
        _run_row(surface, row, rect, selected, focused, state.notes.get(row.path, ""))


def _run_row(surface, row: RunRow, rect, selected: bool, focused: bool, note: str) -> None:
    pygame.draw.rect(surface, theme.PANEL_LIGHT if selected else theme.PANEL, rect, border_radius=4)
    if selected and focused:
        pygame.draw.rect(surface, theme.ACCENT, rect, width=1, border_radius=4)
    spark = pygame.Rect(rect.right - 98, rect.top + 22, 90, rect.height - 28)
    text_w = spark.left - rect.left - 18
    head = theme.draw_text(
        surface, row.algo, (rect.left + 10, rect.top + 3), 14, theme.TEXT, bold=True
    )
    theme.draw_text(
        surface,
        fit(row.name, spark.left - head.right - 16, 10, mono=True),
        (head.right + 8, rect.top + 6),
        10,
        theme.TEXT_DIM,
        mono=True,
    )
    chip(surface, row.status, (rect.right - 8, rect.top + 4))
    p = row.progress
    unit = "steps" if row.clock == "env_steps" else "updates"
    done = f"{row.done:,}" + (f"/{row.budget:,}" if row.budget else "") + f" {unit}"
    evals = f" · best {p.best_eval:.1f} · last {p.last_eval:.1f}" if p.evals else " · no eval yet"
    theme.draw_text(
        surface, fit(done + evals, text_w, 12), (rect.left + 10, rect.top + 21), 12, theme.TEXT
    )
    detail = [f"{duration(p.wall_seconds)} trained"] if p.wall_seconds else []
    left = remaining_seconds(row) if row.status == "running" else None
    if left is not None:
        detail.append(f"≈ {duration(left)} left")
    if row.reason:
        detail.append(row.reason)
    if note:
        detail.append(note)
    color = theme.BAD if row.status == "failed" else theme.TEXT_DIM
    theme.draw_text(
        surface, fit(" · ".join(detail), text_w, 11), (rect.left + 10, rect.top + 38), 11, color
    )
    x_label = "env steps" if row.clock == "env_steps" else "updates"
    draw_curve(surface, spark, p.evals, p.train, (), row.budget or 0, axes=False, x_label=x_label)


__all__ = ["BUTTONS", "TRAIN_SIZE", "button", "chip", "draw", "fit", "layout", "lines"]

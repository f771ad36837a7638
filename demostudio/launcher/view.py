"""Drawing the launcher: the game list with recording counts, the env / player / folder fields,
the Play, Replay and Train buttons and a status line."""

from __future__ import annotations

import pygame

from demostudio.launcher.state import Focus, LauncherState, Layout
from demostudio.ui import theme
from demostudio.ui.text import fill_lines

WIDTH, HEIGHT = 820, 680
ROW_H = 38
"""A game's row: its title, and under it the env id in a size that reads at a glance."""
ID_SIZE = 12
LIST_W = 430
TOP = 78
PAD = 20


def layout(size: tuple[int, int], n_games: int) -> Layout:
    w = size[0]
    rows = [pygame.Rect(PAD, TOP + 24 + i * ROW_H, LIST_W, ROW_H - 2) for i in range(n_games)]
    x = PAD * 2 + LIST_W
    fw = max(160, w - x - PAD)
    return Layout(
        rows=rows,
        env_field=pygame.Rect(x, TOP + 24, fw, 30),
        player_field=pygame.Rect(x, TOP + 94, fw, 30),
        play_button=pygame.Rect(x, TOP + 146, fw, 44),
        folder_field=pygame.Rect(x, TOP + 250, fw, 30),
        replay_button=pygame.Rect(x, TOP + 292, fw, 36),
        train_button=pygame.Rect(x, TOP + 342, fw, 40),
    )


def _field(surface, rect, label, text, focused, hint="", selected=False):
    theme.draw_text(surface, label, (rect.left, rect.top - 20), 13, theme.TEXT_DIM)
    pygame.draw.rect(surface, theme.BACKGROUND, rect, border_radius=4)
    pygame.draw.rect(
        surface, theme.ACCENT if focused else theme.PANEL_LIGHT, rect, width=2, border_radius=4
    )
    shown = _fit(text, rect.w - 18, 14)
    img = theme.font(14, mono=True).render(shown, True, theme.TEXT if text else theme.TEXT_DIM)
    if not text and hint:
        img = theme.font(13).render(hint, True, theme.TEXT_DIM)
    where = img.get_rect(midleft=(rect.left + 8, rect.centery))
    if focused and selected and text:  # Ctrl+A, or a click: typing replaces it
        pygame.draw.rect(surface, theme.SELECTION, where.inflate(4, 4), border_radius=3)
    r = surface.blit(img, where)
    if focused and not selected and pygame.time.get_ticks() // 500 % 2 == 0:
        x = r.right + 1 if text else rect.left + 8
        pygame.draw.line(surface, theme.TEXT, (x, rect.top + 6), (x, rect.bottom - 7), 2)


def _button(surface, rect, label, color, sub=""):
    pygame.draw.rect(surface, color, rect, border_radius=6)
    theme.draw_text(
        surface,
        label,
        (rect.centerx, rect.centery - (7 if sub else 0)),
        17,
        theme.BACKGROUND,
        bold=True,
        anchor="center",
    )
    if sub:
        theme.draw_text(
            surface, sub, (rect.centerx, rect.centery + 11), 11, theme.BACKGROUND, anchor="center"
        )


def draw(
    surface: pygame.Surface,
    state: LauncherState,
    counts: dict[str, int],
    lay: Layout,
    partials: dict[str, int] | None = None,
    runs: dict[str, int] | None = None,
):
    """The launcher; ``counts``: finished recordings per env id, ``partials``: unfinished
    ones (``.partial`` files, e.g. left by a crash), ``runs``: training runs per env id."""
    partials = partials or {}
    surface.fill(theme.BACKGROUND)
    theme.draw_text(surface, "DemoStudio", (PAD, 18), 28, theme.TEXT, bold=True)
    theme.draw_text(
        surface,
        "play a game, every episode is recorded · learn from the demonstrations",
        (PAD, 54),
        13,
        theme.TEXT_DIM,
    )
    theme.draw_text(
        surface, "Games", (PAD, TOP), 14, theme.ACCENT if state.focus is Focus.GAMES else theme.TEXT
    )
    theme.draw_text(
        surface, "recordings", (PAD + LIST_W - 8, TOP), 13, theme.TEXT_DIM, anchor="topright"
    )
    picked = state.picked
    for i, (game, rect) in enumerate(zip(state.games, lay.rows)):
        selected = i == state.selected and game is picked  # not once another id is typed
        if selected:
            pygame.draw.rect(surface, theme.PANEL_LIGHT, rect, border_radius=4)
            if state.focus is Focus.GAMES:
                pygame.draw.rect(surface, theme.ACCENT, rect, width=1, border_radius=4)
        elif i % 2:
            pygame.draw.rect(surface, theme.PANEL, rect, border_radius=4)
        theme.draw_text(surface, game.title, (rect.left + 10, rect.top + 2), 15, theme.TEXT)
        theme.draw_text(
            surface, game.env_id, (rect.left + 10, rect.top + 20), ID_SIZE, theme.TEXT_DIM,
            mono=True,
        )  # fmt: skip
        theme.draw_text(
            surface,
            game.family,
            (rect.left + 270, rect.centery),
            12,
            theme.TEXT_DIM,
            anchor="midleft",
        )
        n = counts.get(game.env_id, 0)
        unfinished = partials.get(game.env_id, 0)
        if unfinished:  # left by a crash: `demostudio recover` (the status line says so)
            theme.draw_text(
                surface,
                f"+{unfinished} unfinished",
                (rect.right - 10, rect.bottom - 1),
                10,
                theme.WARN,
                anchor="bottomright",
            )
        theme.draw_text(
            surface,
            str(n),
            (rect.right - 10, rect.top + 1) if unfinished else (rect.right - 10, rect.centery),
            13 if unfinished else 15,
            theme.GOOD if n else theme.TEXT_DIM,
            bold=bool(n),
            anchor="topright" if unfinished else "midright",
        )

    _field(
        surface,
        lay.env_field,
        "Env id (pick a game or type any registered id)",
        state.env_text,
        state.focus is Focus.ENV,
        "e.g. ALE/Pong-v5",
        selected=state.selected_all,
    )
    _field(
        surface,
        lay.player_field,
        "Player",
        state.player,
        state.focus is Focus.PLAYER,
        "your name (stored in every episode)",
        selected=state.selected_all,
    )
    env_id = state.env_text.strip()
    n = counts.get(env_id)
    sub = f"Enter · {n} recording{'s' if n != 1 else ''} so far" if n is not None else "Enter"
    _button(surface, lay.play_button, "Play and record", theme.GOOD, sub)
    theme.draw_text(
        surface, "Replay viewer", (lay.folder_field.left, lay.folder_field.top - 46), 14, theme.TEXT
    )
    _field(
        surface,
        lay.folder_field,
        "Folder or episode file",
        state.folder_text,
        state.focus is Focus.FOLDER,
        selected=state.selected_all,
    )
    _button(surface, lay.replay_button, "Open replay viewer", theme.ACCENT, "Ctrl+R")
    n_runs = (runs or {}).get(env_id, 0)
    sub = f"Ctrl+T · {n_runs} run{'s' if n_runs != 1 else ''} of this game" if runs else "Ctrl+T"
    _button(surface, lay.train_button, "Train an agent", theme.WARN, sub)

    hints = (
        "↑/↓ pick · Tab next field · Ctrl+A select, Ctrl+U clear · Enter play · "
        "Ctrl+R replay · Ctrl+T train · Esc quit"
    )
    h = surface.get_height()
    label = "Your recordings: "
    x = theme.draw_text(surface, label, (PAD, h - 46), 12, theme.TEXT_DIM).right
    shown = _fit(str(state.root), (surface.get_width() - x) // 2, 12)
    theme.draw_text(
        surface,
        shown + "  (demostudio launch --out DIR)",
        (x, h - 46),
        12,
        theme.TEXT,
        mono=True,
    )
    theme.draw_text(surface, hints, (PAD, h - 24), 12, theme.TEXT_DIM)
    if state.status:
        color = theme.BAD if state.status_error else theme.TEXT
        y = lay.train_button.bottom + 14
        width = surface.get_width() - lay.replay_button.left - PAD
        room = max(1, (h - 52 - y) // 18)
        for line in _wrap(state.status, width, 13)[:room]:
            theme.draw_text(surface, line, (lay.replay_button.left, y), 13, color)
            y += 18


def _fit(text: str, width: int, size: int) -> str:
    """``text``, shortened from the left with an ellipsis to fit ``width`` pixels."""
    font = theme.font(size, mono=True)
    if font.size(text)[0] <= width:
        return text
    while len(text) > 1 and font.size("…" + text)[0] > width:
        text = text[1:]
    return "…" + text


def _break_word(word: str, width: int, font: pygame.font.Font) -> list[str]:
    """A word wider than ``width`` (a long path) in pieces that fit, cut after a "/" where
    one is near the edge."""
    pieces: list[str] = []
    while font.size(word)[0] > width and len(word) > 1:
        cut = len(word)
        while cut > 1 and font.size(word[:cut])[0] > width:
            cut -= 1
        slash = word.rfind("/", 0, cut)
        if slash >= cut // 2:
            cut = slash + 1
        pieces.append(word[:cut])
        word = word[cut:]
    return [*pieces, word]


def _wrap(text: str, width: int, size: int) -> list[str]:
    """``text`` in lines that fit ``width``: at spaces, and inside words (paths) too wide for
    a line of their own; at most 8 lines."""
    font = theme.font(size)
    lines: list[str] = []
    for para in text.split("\n"):
        words = [p for w in para.split(" ") for p in _break_word(w, width, font) if p]
        lines += fill_lines(words, font, width)
    return lines[:8]

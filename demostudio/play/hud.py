"""Drawing the play window's heads-up display and overlays (HUD bar, countdown, pause banner,
quit prompt, help, messages). Pure drawing: each function takes a surface, a rect and data."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import pygame

from demostudio.ui import theme
from demostudio.ui.text import fill_lines

HUD_HEIGHT = 54


class HudInfo(NamedTuple):
    """What the HUD bar shows."""

    env_id: str
    controller: str
    recording: bool
    paused: bool
    turn_based: bool
    episode: int
    saved: int
    step: int
    episode_return: float
    last_reward: float | None
    fps: float
    target_fps: float | None
    lives: int | None
    input: str
    """The input driving the game: held keys, or the agent's action."""
    blink: bool
    speed: float = 1.0
    """The speed multiple of the starting rate (``[`` / ``]``)."""
    control: str = ""
    """Who is in control when control can change hands (take-over), else empty."""
    person: bool = False
    """The person drives (took over from the agent)."""


def _fmt(x: float) -> str:
    return f"{x:.0f}" if float(x).is_integer() and abs(x) < 1e6 else f"{x:.2f}"


def _status(info: HudInfo) -> tuple[str, tuple[int, int, int]]:
    if info.paused:
        return "PAUSED", theme.WARN
    if info.recording:
        return "REC", theme.RECORDING
    return "LIVE", theme.TEXT_DIM


def draw_hud(surface: pygame.Surface, rect: pygame.Rect, info: HudInfo) -> None:
    """Two rows: status, episode, step, return, reward / env, fps, lives, keys, help hint."""
    surface.fill(theme.PANEL, rect)
    pygame.draw.line(
        surface, theme.PANEL_LIGHT, (rect.left, rect.bottom - 1), (rect.right, rect.bottom - 1)
    )
    y1, y2 = rect.top + 6, rect.top + 30
    x = rect.left + 10
    label, color = _status(info)
    dot = color if (info.blink or not info.recording or info.paused) else theme.PANEL
    pygame.draw.circle(surface, dot, (x + 6, y1 + 9), 6)
    x = theme.draw_text(surface, label, (x + 18, y1), 15, color, bold=True).right + 14
    parts = [
        f"Ep {info.episode}",
        f"step {info.step}",
        f"return {_fmt(info.episode_return)}",
    ]
    if info.last_reward is not None:
        parts.append(f"r {info.last_reward:+.4g}")
    for text in parts:
        x = theme.draw_text(surface, text, (x, y1 + 1), 14, theme.TEXT, mono=True).right + 12
    saved = theme.font(13).render(
        f"{info.saved} saved", True, theme.GOOD if info.saved else theme.TEXT_DIM
    )
    if x + saved.get_width() < rect.right - 10:  # narrow windows: the counters come first
        surface.blit(saved, saved.get_rect(topright=(rect.right - 10, y1 + 1)))

    x = rect.left + 10
    if info.control:
        x = _draw_control(surface, (x, y2 - 2), info.control, info.person) + 12
    if info.turn_based:
        rate = "turn-based"
    else:
        target = "max" if info.target_fps is None else f"{round(info.target_fps, 2):g}"
        rate = f"{info.fps:4.1f}/{target} fps"
        if info.speed != 1.0:
            rate += f" x{info.speed:g}"
    low = info.target_fps is not None and not info.turn_based and info.fps < 0.9 * info.target_fps
    rate_color = theme.WARN if low and info.step > 0 and not info.paused else theme.TEXT_DIM
    x = theme.draw_text(surface, rate, (x, y2), 13, rate_color, mono=True).right + 12
    if info.lives is not None:
        x = theme.draw_text(surface, f"lives {info.lives}", (x, y2), 13, theme.TEXT).right + 12
    x = theme.draw_text(surface, info.input, (x, y2), 13, theme.ACCENT, mono=True).right
    hint = theme.font(13).render("F1 help", True, theme.TEXT_DIM)
    if x + 12 + hint.get_width() < rect.right - 10:
        surface.blit(hint, hint.get_rect(topright=(rect.right - 10, y2)))


def _draw_control(
    surface: pygame.Surface, topleft: tuple[int, int], text: str, person: bool
) -> int:
    """A filled label saying who drives (the person: warm, the agent: blue); its right edge."""
    img = theme.font(13, bold=True).render(text, True, theme.BACKGROUND)
    box = img.get_rect(topleft=topleft).inflate(12, 4)
    box.topleft = topleft
    pygame.draw.rect(surface, theme.WARN if person else theme.ACCENT, box, border_radius=5)
    surface.blit(img, img.get_rect(center=box.center))
    return box.right


def _shade(surface: pygame.Surface, rect: pygame.Rect, alpha: int = 150) -> None:
    shade = pygame.Surface(rect.size, pygame.SRCALPHA)
    shade.fill((0, 0, 0, alpha))
    surface.blit(shade, rect.topleft)


def draw_countdown(
    surface: pygame.Surface, rect: pygame.Rect, seconds_left: float, episode: int, hint: str = ""
):
    """A big 3-2-1 over the game's first frame (``hint``: a line under it)."""
    _shade(surface, rect, 110)
    n = max(1, int(seconds_left) + (0 if seconds_left.is_integer() else 1))
    size = max(24, min(rect.h // 3, 140))
    theme.draw_text(surface, str(n), rect.center, size, theme.TEXT, bold=True, anchor="center")
    theme.draw_text(
        surface,
        f"Episode {episode}: get ready",
        (rect.centerx, rect.centery + size // 2 + 14),
        16,
        theme.TEXT,
        anchor="midtop",
    )
    if hint:
        theme.draw_text(
            surface,
            hint,
            (rect.centerx, rect.centery + size // 2 + 38),
            15,
            theme.WARN,
            anchor="midtop",
        )


def draw_banner(
    surface: pygame.Surface,
    rect: pygame.Rect,
    title: str,
    lines: Sequence[str] = (),
    color: tuple[int, int, int] = theme.WARN,
) -> None:
    """A centred box with a title and a few lines (pause, quit prompt)."""
    title_img = theme.font(22, bold=True).render(title, True, color)
    imgs = [theme.font(14).render(line, True, theme.TEXT) for line in lines]
    w = max([title_img.get_width(), *[i.get_width() for i in imgs]]) + 32
    h = title_img.get_height() + sum(i.get_height() + 4 for i in imgs) + 28
    box = pygame.Rect(0, 0, min(w, rect.w - 8), h)
    box.center = rect.center
    _shade(surface, rect, 90)
    pygame.draw.rect(surface, theme.PANEL, box, border_radius=8)
    pygame.draw.rect(surface, color, box, width=2, border_radius=8)
    y = box.top + 12
    surface.blit(title_img, title_img.get_rect(midtop=(box.centerx, y)))
    y += title_img.get_height() + 8
    for img in imgs:
        surface.blit(img, img.get_rect(midtop=(box.centerx, y)))
        y += img.get_height() + 4


def draw_help(
    surface: pygame.Surface,
    rect: pygame.Rect,
    title: str,
    game_rows: Sequence[tuple[str, str]],
    control_rows: Sequence[tuple[str, str]],
    notes: Sequence[str] = (),
) -> None:
    """The key map and the controls, in a panel sized to ``rect`` (font shrinks to fit)."""
    _shade(surface, rect, 120)
    rows: list[tuple[str, str, bool]] = [(title, "", True)]
    rows += [(k, v, False) for k, v in game_rows]
    rows += [(note, "", False) for note in notes]
    rows.append(("Controls", "", True))
    rows += [(k, v, False) for k, v in control_rows]
    size = 15
    while size > 9:
        line_h = theme.font(size).get_linesize() + 2
        key_w = max(theme.font(size, mono=True).size(k)[0] for k, v, head in rows if v)
        text_w = max(theme.font(size).size(v)[0] for k, v, head in rows if v)
        note_w = max(theme.font(size).size(k)[0] for k, v, head in rows if not v)
        width = max(key_w + text_w + 16, note_w) + 32
        if len(rows) * line_h + 24 <= rect.h and width <= rect.w:
            break
        size -= 1
    box = pygame.Rect(0, 0, min(width, rect.w - 8), min(len(rows) * line_h + 20, rect.h - 8))
    box.center = rect.center
    pygame.draw.rect(surface, theme.PANEL, box, border_radius=8)
    pygame.draw.rect(surface, theme.PANEL_LIGHT, box, width=1, border_radius=8)
    x0 = box.left + 16
    y = box.top + 10
    for key, text, head in rows:
        if head:
            theme.draw_text(surface, key, (x0, y), size + 1, theme.ACCENT, bold=True)
        elif not text:
            theme.draw_text(surface, key, (x0, y), size, theme.TEXT_DIM)
        else:
            theme.draw_text(surface, key, (x0, y), size, theme.WARN, mono=True)
            theme.draw_text(surface, text, (x0 + key_w + 16, y), size, theme.TEXT)
        y += line_h


def _ellipsize_middle(text: str, font: pygame.font.Font, width: int) -> str:
    """``text`` with its middle replaced by "…" until it fits ``width`` (a file name keeps
    its start and its end)."""
    if font.size(text)[0] <= width:
        return text
    keep = len(text)
    while keep > 2:
        keep -= 1
        head = (keep + 1) // 2
        shown = text[:head] + "…" + text[len(text) - (keep - head) :]
        if font.size(shown)[0] <= width:
            return shown
    return "…"


def wrap_lines(text: str, font: pygame.font.Font, width: int, most: int = 3) -> list[str]:
    """``text`` in at most ``most`` lines that fit ``width``: broken at spaces; a word too
    wide for a line of its own (a path) loses its middle."""
    words = (_ellipsize_middle(word, font, width) for word in text.split(" "))
    lines = fill_lines(words, font, width)
    if len(lines) > most:
        lines = [*lines[: most - 1], _ellipsize_middle(" ".join(lines[most - 1 :]), font, width)]
    return lines


def draw_message(surface: pygame.Surface, rect: pygame.Rect, text: str) -> None:
    """A message at the bottom of ``rect`` (episode saved, screenshot saved...), wrapped to
    the window's width (a long file name loses its middle, never its ends)."""
    font = theme.font(14)
    imgs = [font.render(line, True, theme.TEXT) for line in wrap_lines(text, font, rect.w - 30)]
    w = max(i.get_width() for i in imgs)
    h = sum(i.get_height() for i in imgs)
    box = pygame.Rect(0, 0, w + 20, h + 10)
    box.midbottom = (rect.centerx, rect.bottom - 10)
    box.clamp_ip(rect)
    pygame.draw.rect(surface, theme.PANEL, box, border_radius=6)
    y = box.top + 5
    for img in imgs:
        surface.blit(img, img.get_rect(midtop=(box.centerx, y)))
        y += img.get_height()


__all__ = [
    "HUD_HEIGHT",
    "HudInfo",
    "draw_banner",
    "draw_countdown",
    "draw_help",
    "draw_hud",
    "draw_message",
]

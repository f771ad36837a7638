"""The overlay: what happened at the shown frame, as text lines over the picture."""

from __future__ import annotations

from typing import Any

import numpy as np
import pygame

from demostudio.episode.quality import EpisodeQuality
from demostudio.ui import theme

from .loaded import LoadedEpisode

MAX_INFO_ITEMS = 8
"""Info values shown (preferred keys first, then the rest in name order)."""
PREFERRED_INFO = ("lives", "score", "episode_frame_number", "frame_number")


def format_time(seconds: float) -> str:
    minutes, secs = divmod(max(seconds, 0.0), 60.0)
    return f"{int(minutes)}:{secs:05.2f}"


def format_value(value: Any) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.4g}"
    if isinstance(value, np.ndarray):
        if value.size > 8:
            return f"array{list(value.shape)}"
        return np.array2string(value, precision=3, separator=" ", suppress_small=True)
    text = str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def format_action(action: Any, meanings: tuple[str, ...] | None) -> str:
    if isinstance(action, np.ndarray) and action.shape == ():
        action = action.item()
    if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
        name = meanings[int(action)] if meanings and 0 <= int(action) < len(meanings) else None
        return f"{int(action)} {name}" if name else str(int(action))
    if isinstance(action, dict):
        return ", ".join(f"{k}={format_value(v)}" for k, v in action.items())
    return format_value(action)


def _chosen_infos(info: dict[str, Any]) -> list[tuple[str, Any]]:
    first = [(k, info[k]) for k in PREFERRED_INFO if k in info]
    rest = sorted((k, v) for k, v in info.items() if k not in PREFERRED_INFO)
    return (first + rest)[:MAX_INFO_ITEMS]


def describe_frame(ep: LoadedEpisode, i: int) -> list[str]:
    """The overlay's lines for frame ``i`` (0 = reset; frame t+1 follows step t)."""
    s = ep.summary
    lines = [
        f"frame {i} / {s.length}",
        f"time {format_time(i / ep.fps)} / {format_time(s.length / ep.fps)}",
    ]
    if i == 0:
        lines.append("reset (no action yet)")
        lines.append("return 0")
        lines.append(f"seed {s.seed}")
    else:
        t = i - 1
        keys = ep.keys(t)
        lines.append(f"step {t}")
        lines.append(f"action {format_action(ep.action(t), s.action_meanings)}")
        if keys:
            lines.append("keys held  " + " + ".join(keys))
        lines.append(f"reward {ep.rewards[t]:+.4g}")
        lines.append(f"return {ep.returns[i]:.4g}")
        if ep.mixed:
            lines.append("acted: person" if ep.person[t] else "acted: agent")
        end = [
            name
            for name, flag in (("TERMINATED", ep.terminations[t]), ("TRUNCATED", ep.truncations[t]))
            if flag
        ]
        if end:
            lines.append(" + ".join(end))
    infos = _chosen_infos(ep.info(i))
    lines += [f"{k} {format_value(v)}" for k, v in infos]
    lines.append(s.controller)
    lines.append(f"player {s.player or '-'}")
    if s.tags:
        lines.append("tags " + ", ".join(s.tags))
    if s.notes:
        note = s.notes.replace("\n", " ")
        lines.append("notes " + (note if len(note) <= 40 else note[:37] + "..."))
    return lines


def who_acted(q: EpisodeQuality) -> str:
    """ "person 35%, 2 takeovers" ("" for an episode nobody took over and no person played)."""
    if q.error is not None or (q.human_share == 0 and not q.takeovers):
        return ""
    n = q.takeovers
    return f"person {q.human_share:.0%}" + (f", {n} takeover{'s' * (n != 1)}" if n else "")


def quality_lines(q: EpisodeQuality | None) -> list[str]:
    """The overlay's quality lines: who acted, then each flag (as ``demostudio quality``)."""
    if q is None:
        return []
    lines = [who_acted(q)] if who_acted(q) else []
    return lines + [f"! {f.kind}: {f.detail}" for f in q.flags]


def render_overlay(lines: list[str]) -> pygame.Surface | None:
    """A translucent panel with ``lines`` in a small monospace font (None when empty)."""
    font = theme.font(13, mono=True)
    images = [font.render(line, True, theme.TEXT) for line in lines]
    if not images:
        return None
    width = max(im.get_width() for im in images) + 16
    height = sum(im.get_height() for im in images) + 12
    panel = pygame.Surface((width, height), pygame.SRCALPHA)
    panel.fill((*theme.BACKGROUND, 200))
    pygame.draw.rect(panel, (*theme.PANEL_LIGHT, 255), panel.get_rect(), width=1)
    y = 6
    for im in images:
        panel.blit(im, (8, y))
        y += im.get_height()
    return panel

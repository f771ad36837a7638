"""Text laid out in a width: lines broken at spaces, words too wide handled by the caller."""

from __future__ import annotations

from collections.abc import Iterable

import pygame


def fill_lines(words: Iterable[str], font: pygame.font.Font, width: int) -> list[str]:
    """``words`` joined by spaces into lines no wider than ``width`` (a word wider than
    ``width`` stands on a line of its own: break or shorten such words first)."""
    lines: list[str] = []
    line = ""
    for word in words:
        trial = f"{line} {word}" if line else word
        if font.size(trial)[0] <= width or not line:
            line = trial
        else:
            lines.append(line)
            line = word
    lines.append(line)
    return lines


def wrap_at_spaces(
    text: str, font: pygame.font.Font, width: int, most: int | None = None
) -> list[str]:
    """``text`` in lines no wider than ``width``, cut at a space where one fits, else inside
    a word; with ``most``, whatever is left after ``most - 1`` lines is the last line, as it
    is (the caller shortens it)."""
    out: list[str] = []
    while text and (most is None or len(out) < most - 1) and font.size(text)[0] > width:
        cut = len(text)
        while cut > 1 and font.size(text[:cut])[0] > width:
            space = text.rfind(" ", 0, cut - 1)
            cut = space if space > 0 else cut - 1
        out.append(text[:cut])
        text = text[cut:].lstrip()
    return [*out, text] if text else out


__all__ = ["fill_lines", "wrap_at_spaces"]

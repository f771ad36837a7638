"""The episode list on the left: return, length, player and date per file, who acted and the
quality flags (as ``demostudio quality``); unreadable files show their error; click a row to
open it, scroll with the wheel."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pygame

from demostudio.episode.quality import EpisodeQuality
from demostudio.episode.verify import VerifyResult
from demostudio.ui import theme
from demostudio.ui.text import wrap_at_spaces

from .catalog import Catalog, Entry
from .overlay import who_acted
from .qualityscan import QualityScan

ROW_HEIGHT = 78
HEADER_HEIGHT = 28


def _when(iso: str) -> str:
    try:
        return datetime.fromisoformat(iso).strftime("%m-%d %H:%M")
    except ValueError:
        return iso[:16]


def _fit(text: str, font: pygame.font.Font, width: int) -> str:
    if font.size(text)[0] <= width:
        return text
    while text and font.size(text + "...")[0] > width:
        text = text[:-1]
    return text + "..."


def _split_error(text: str, font: pygame.font.Font, width: int, lines: int = 3) -> list[str]:
    """An error over up to ``lines`` lines, broken at spaces (the last cut with "..." if
    still too long)."""
    return wrap_at_spaces(text, font, width, most=lines)


def row_lines(entry: Entry) -> tuple[str, str, str]:
    """The three lines of a row: env and tags; return, length and player; date and file.
    An unreadable file shows its name and then its error."""
    name = entry.path.name
    if entry.summary is None:
        error = entry.error or "cannot open"
        return name, error, ""
    s = entry.summary
    tags = f"  [{', '.join(s.tags)}]" if s.tags else ""
    facts = f"return {s.total_return:.4g}  length {s.length}  {s.player or '-'}"
    return s.env_id + tags, facts, f"{_when(s.recorded_at)}  {name.removesuffix('.h5')}"


def verify_mark(result: VerifyResult, long: bool = False) -> str:
    """What V found, kept on the episode's row and in the overlay: "verified" or "DIVERGES
    at step N" (``long``: with the field and the steps re-simulated)."""
    if result.ok:
        return f"verified: {result.steps_checked} steps match" if long else "verified"
    d = result.divergence
    where = "at reset" if d.step < 0 else f"at step {d.step}"
    return f"DIVERGES {where} in {d.field} (J jumps there)" if long else f"DIVERGES {where}"


def quality_line(q: EpisodeQuality | None) -> str:
    """The row's fourth line: who acted and the flags ("" when there is nothing to say)."""
    if q is None or q.error is not None:
        return ""
    parts = [who_acted(q)] if who_acted(q) else []
    if q.flags:
        parts.append("! " + ", ".join(f.kind for f in q.flags))
    return "  ".join(parts)


class EpisodeList:
    def __init__(self) -> None:
        self.rect = pygame.Rect(0, 0, 1, 1)
        self.scroll = 0
        """Index of the first visible row."""
        self._cache: pygame.Surface | None = None
        self._key: tuple | None = None

    @property
    def visible_rows(self) -> int:
        return max(1, (self.rect.height - HEADER_HEIGHT) // ROW_HEIGHT)

    def keep_visible(self, index: int) -> None:
        if index < self.scroll:
            self.scroll = index
        elif index >= self.scroll + self.visible_rows:
            self.scroll = index - self.visible_rows + 1
        self.scroll = max(self.scroll, 0)

    def scroll_by(self, rows: int, total: int) -> None:
        self.scroll = min(max(self.scroll + rows, 0), max(total - self.visible_rows, 0))

    def row_at(self, pos: tuple[int, int], total: int) -> int | None:
        """The entry index under ``pos``, or None."""
        if not self.rect.collidepoint(pos) or pos[1] < self.rect.y + HEADER_HEIGHT:
            return None
        index = self.scroll + (pos[1] - self.rect.y - HEADER_HEIGHT) // ROW_HEIGHT
        return index if 0 <= index < total else None

    def draw(
        self,
        surface: pygame.Surface,
        catalog: Catalog,
        quality: QualityScan,
        verified: dict[Path, VerifyResult] | None = None,
    ) -> None:
        """Blit the list, re-rendering it only when it changed (``verified``: the results of
        V so far, marked on their rows)."""
        verified = verified or {}
        key = (
            self.rect.size,
            self.scroll,
            catalog.index,
            catalog.version,
            len(catalog),
            quality.version,
            tuple((p, id(r)) for p, r in verified.items()),
        )
        if self._cache is None or key != self._key:
            self._cache = pygame.Surface(self.rect.size)
            self._render(self._cache, catalog, quality, verified)
            self._key = key
        surface.blit(self._cache, self.rect.topleft)

    def _render(
        self,
        surface: pygame.Surface,
        catalog: Catalog,
        quality: QualityScan,
        verified: dict[Path, VerifyResult],
    ) -> None:
        area = surface.get_rect()
        pygame.draw.rect(surface, theme.PANEL, area)
        bad = sum(not e.ok for e in catalog.entries)
        flagged = sum(bool(q.flags) for q in quality.results.values() if q.error is None)
        title = f"{len(catalog)} episode(s)" + (f", {bad} unreadable" if bad else "")
        title += f", {flagged} flagged" if flagged else ""
        theme.draw_text(surface, title, (area.x + 10, area.y + 6), 13, theme.TEXT_DIM)
        name_font, fact_font = theme.font(13, bold=True), theme.font(12, mono=True)
        width = area.width - 20
        end = min(len(catalog), self.scroll + self.visible_rows)
        for index in range(self.scroll, end):
            entry = catalog.entries[index]
            y = area.y + HEADER_HEIGHT + (index - self.scroll) * ROW_HEIGHT
            row = pygame.Rect(area.x + 4, y, area.width - 8, ROW_HEIGHT - 4)
            if index == catalog.index:
                pygame.draw.rect(surface, theme.PANEL_LIGHT, row, border_radius=4)
                pygame.draw.rect(surface, theme.ACCENT, (row.x, row.y, 3, row.height))
            first, *rest = row_lines(entry)
            if not entry.ok:  # the error may need both lines
                rest = _split_error(rest[0], fact_font, width)
            color = theme.TEXT if entry.ok else theme.BAD
            surface.blit(
                name_font.render(_fit(first, name_font, width), True, color), (row.x + 8, row.y + 4)
            )
            dim = theme.TEXT_DIM if entry.ok else theme.BAD
            for n, line in enumerate(rest):
                image = fact_font.render(_fit(line, fact_font, width), True, dim)
                surface.blit(image, (row.x + 8, row.y + 23 + n * 16))
            extra = quality_line(quality.get(entry.path)) if entry.ok else ""
            result = verified.get(entry.path) if entry.ok else None
            if result is not None:
                extra = f"{verify_mark(result)}  {extra}".strip()
            if extra:
                q = quality.get(entry.path)
                color = theme.WARN if q is not None and q.flags else theme.TEXT_DIM
                if result is not None:
                    color = theme.BAD if not result.ok else color
                    color = theme.GOOD if result.ok and color is theme.TEXT_DIM else color
                image = fact_font.render(_fit(extra, fact_font, width), True, color)
                surface.blit(image, (row.x + 8, row.y + 23 + 2 * 16))
        if not catalog.entries:
            theme.draw_text(
                surface, "no episodes found", (area.x + 10, area.y + 40), 14, theme.TEXT_DIM
            )

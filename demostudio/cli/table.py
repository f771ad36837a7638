"""Tables for the terminal: aligned columns whose cells cannot move the cursor, fitted to the
terminal's width (columns left out or cut with an ellipsis) and never cut for a pipe."""

from __future__ import annotations

import os
import shutil
import sys

from demostudio.episode.attrs import printable


def terminal_width() -> int | None:
    """Columns to fit a table in: ``$COLUMNS`` or the terminal's; None when the output goes
    to a pipe or file (nothing is cut for a script)."""
    if os.environ.get("COLUMNS", "").isdigit():
        return int(os.environ["COLUMNS"])
    if sys.stdout.isatty():
        return shutil.get_terminal_size().columns
    return None


def _ellipsis() -> str:
    """One character where the output can encode it, else three dots."""
    try:
        "…".encode(sys.stdout.encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        return "..."
    return "…"


def _cut(text: str, width: int, keep_end: bool) -> str:
    if len(text) <= width:
        return text
    mark = _ellipsis()
    if width <= len(mark):
        return text[:width]
    rest = width - len(mark)
    return mark + text[-rest:] if keep_end else text[:rest] + mark


def format_table(
    header: list[str],
    rows: list[list[str]],
    width: int | None = None,
    drop: tuple[str, ...] = (),
    tail: tuple[str, ...] = (),
    floor: dict[str, int] | None = None,
) -> str:
    """Aligned columns; control characters in a cell (from a file's attributes or name) are
    escaped, so no cell can move the cursor or fake a line.

    With ``width``, the table fits it: the columns named in ``floor`` are first cut down to
    that many characters, then the columns in ``drop`` are left out in that order (least
    useful first), then the widest remaining columns are cut further (to 8 at least). A cut
    cell ends in an ellipsis, or starts with one for the columns in ``tail`` (a path: its
    file name is what tells rows apart)."""
    rows = [[printable(str(c)) for c in row] for row in rows]
    columns = list(header)
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]

    def total() -> int:
        return sum(widths) + 2 * (len(widths) - 1)

    if width is not None and total() > width:
        for name, low in (floor or {}).items():
            if name in columns:
                i = columns.index(name)
                widths[i] = max(min(widths[i], low), len(name))
        for name in drop:
            if total() <= width:
                break
            if name in columns:
                i = columns.index(name)
                del columns[i], widths[i]
        while total() > width:
            i = max(range(len(widths)), key=widths.__getitem__)
            if widths[i] <= max(8, len(columns[i])):
                break  # as narrow as it reads: the terminal wraps the rest
            widths[i] -= min(widths[i] - max(8, len(columns[i])), total() - width)
    keep = [header.index(c) for c in columns]

    def line(cells: list[str]) -> str:
        shown = [_cut(str(cells[k]), w, header[k] in tail).ljust(w) for k, w in zip(keep, widths)]
        return "  ".join(shown).rstrip()

    lines = [line(header), "  ".join("-" * w for w in widths)]
    lines += [line(row) for row in rows]
    return "\n".join(lines)

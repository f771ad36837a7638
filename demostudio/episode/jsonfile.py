"""JSON and JSON-lines files (settings, key maps, a run's metrics.jsonl, a comparison's
results.jsonl) read as hostile input, with the checks the episode readers use: the path is
looked at with ``stat`` before it is opened (a FIFO would block forever, ``/dev/zero`` never
ends, a folder or a link loop is not a file), its size is bounded before anything is read and
again while reading, the text must be UTF-8 and JSON nested at most
:data:`~demostudio.episode.attrs.MAX_JSON_DEPTH` deep (deeper nesting makes ``json`` raise
RecursionError). Every failure is one :class:`EpisodeError` naming the file (and the line).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .attrs import MAX_ATTR_BYTES, MAX_JSON_DEPTH, json_depth
from .hostile import not_a_regular_file, short_error
from .schema import EpisodeError

MAX_JSON_BYTES = MAX_ATTR_BYTES
"""Largest JSON document read (a key map or the settings take a few KB)."""
MAX_JSON_LINES_BYTES = 1024 * 1024 * 1024
"""Largest JSON-lines file read: lines are streamed (``plot`` keeps only its points), and a
run's metrics.jsonl grows about 0.9 KB per 1,000 env steps (34 KB for CartPole's 40k), so
a billion-step run stays under it."""
MAX_JSON_LINE_BYTES = 1024 * 1024
"""Longest line of a JSON-lines file (a metrics row is a few hundred bytes)."""


def _open_checked(path: Path, expected: str, max_bytes: int):
    problem = not_a_regular_file(path, expected)
    if problem is not None:
        raise EpisodeError(path, None, problem)
    try:
        fh = open(path, "rb")  # noqa: SIM115 (the caller closes it)
    except OSError as exc:
        raise EpisodeError(path, None, f"cannot read it ({exc.strerror or exc})") from None
    size = os.fstat(fh.fileno()).st_size  # the file opened, not the name again
    if size > max_bytes:
        fh.close()
        raise _too_big(path, expected, max_bytes, f", got {size} bytes")
    return fh


def _too_big(path: Path, expected: str, max_bytes: int, got: str = "") -> EpisodeError:
    return EpisodeError(path, None, f"expected {expected} of at most {max_bytes} bytes{got}")


def parse_json_text(raw: bytes, path: object, field: str | None) -> Any:
    """``raw`` as UTF-8 JSON nested at most MAX_JSON_DEPTH deep, or EpisodeError."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EpisodeError(
            path, field, f"expected UTF-8 text, got byte 0x{raw[exc.start]:02x} at {exc.start}"
        ) from None
    depth = json_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise EpisodeError(
            path, field, f"expected JSON nested at most {MAX_JSON_DEPTH} deep, got {depth}"
        )
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise EpisodeError(path, field, f"expected JSON ({short_error(exc)})") from None


def read_json_file(path: str | Path, expected: str, max_bytes: int = MAX_JSON_BYTES) -> Any:
    """The JSON document in the file at ``path`` (``expected``: what it should be, e.g. "a key
    map JSON file", for the messages); EpisodeError naming the file otherwise."""
    path = Path(path)
    with _open_checked(path, expected, max_bytes) as fh:
        raw = fh.read(max_bytes + 1)  # bounded even if the file grew since stat
    if len(raw) > max_bytes:
        raise _too_big(path, expected, max_bytes)
    return parse_json_text(raw, path, None)


def read_json_lines(
    path: str | Path,
    expected: str,
    max_bytes: int = MAX_JSON_LINES_BYTES,
    max_line: int = MAX_JSON_LINE_BYTES,
) -> Iterator[tuple[int, Any, EpisodeError | None]]:
    """``(line number, value, None)`` for each non-blank line of the JSON-lines file at
    ``path``, or ``(line number, None, error)`` for a line that is not JSON (too long, not
    UTF-8, malformed: the caller decides whether that is fatal). A file that cannot be read
    at all raises EpisodeError naming it."""
    path = Path(path)
    with _open_checked(path, expected, max_bytes) as fh:
        total, n = 0, 0
        overlong: EpisodeError | None = None  # of line n, said once its end is read
        for piece in iter(lambda: fh.readline(max_line + 1), b""):
            total += len(piece)
            if total > max_bytes:
                raise _too_big(path, expected, max_bytes)
            complete = piece.endswith(b"\n")
            if overlong is not None:  # the rest of an overlong line, a bounded piece at a time
                if complete:
                    yield n, None, overlong
                    overlong = None
                continue
            n += 1
            if len(piece) > max_line and not complete:
                overlong = EpisodeError(
                    path, f"line {n}", f"expected lines of at most {max_line} bytes"
                )
                continue
            if not piece.strip():
                continue
            try:
                yield n, parse_json_text(piece, path, f"line {n}"), None
            except EpisodeError as exc:
                yield n, None, exc
        if overlong is not None:
            yield n, None, overlong


__all__ = [
    "MAX_JSON_BYTES",
    "MAX_JSON_LINES_BYTES",
    "MAX_JSON_LINE_BYTES",
    "parse_json_text",
    "read_json_file",
    "read_json_lines",
]

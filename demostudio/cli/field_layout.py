"""What a config dataclass's source says about its fields: the docstring written under each
field and the comment header (``# --- replay ---``) it sits under, read from the class's file
(parsed once per file) and merged along the dataclass bases."""

from __future__ import annotations

import ast
import bisect
import dataclasses
import inspect
import itertools
import re
from functools import cache
from pathlib import Path
from typing import NamedTuple

GROUP_HEADER = re.compile(r"#\s*---\s*(?P<title>[^-].*?)\s*-*\s*$")
"""A comment header in a config class, ``# --- replay ---``: the fields below it, up to the
next header, are one group of the help (as STYLE has a config's fields grouped under comment
headers). ``# --- algorithm: PPO loss ---`` is a group of its own listed with ``algorithm``."""


class FieldLayout(NamedTuple):
    doc: str | None
    """The docstring under the field (None: none there)."""
    group: str | None
    """The header above the field in its class (None: none there)."""


@cache
def _file_layout(filename: str) -> dict[str, dict[str, FieldLayout]]:
    """Class qualname -> field -> layout, for every class in the file (read and parsed once,
    however many classes and commands use it)."""
    try:
        source = Path(filename).read_text(encoding="utf-8")
        tree = ast.parse(source)
    except (OSError, SyntaxError, ValueError):
        return {}
    headers = [
        (number, m["title"])
        for number, text in enumerate(source.splitlines(), 1)
        if (m := GROUP_HEADER.match(text.strip()))
    ]
    lines = [line for line, _ in headers]
    classes: dict[str, dict[str, FieldLayout]] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                classes[prefix + node.name] = _class_layout(node, headers, lines)
                visit(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(node.body, f"{prefix}{node.name}.<locals>.")

    visit(tree.body, "")
    return classes


def _class_layout(
    node: ast.ClassDef, headers: list[tuple[int, str]], lines: list[int]
) -> dict[str, FieldLayout]:
    out: dict[str, FieldLayout] = {}
    body = [*node.body, None]
    in_docs = {
        line
        for stmt in node.body
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
        for line in range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1)
    }
    for stmt, nxt in itertools.pairwise(body):
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
            continue
        doc = None
        if (
            isinstance(nxt, ast.Expr)
            and isinstance(nxt.value, ast.Constant)
            and isinstance(nxt.value.value, str)
        ):
            doc = " ".join(nxt.value.value.split())
        i = bisect.bisect_left(lines, stmt.lineno) - 1
        while i >= 0 and lines[i] in in_docs:  # a header's text quoted in a docstring
            i -= 1
        group = headers[i][1] if i >= 0 and lines[i] > node.lineno else None
        out[stmt.target.id] = FieldLayout(doc, group)
    return out


@cache
def field_layouts(cls: type) -> dict[str, FieldLayout]:
    """Each field's docstring and group, for ``cls`` and its dataclass bases: a field
    declared again in a subclass without a docstring (a new default) keeps its base's help,
    and without a header above it keeps its base's group."""
    merged: dict[str, FieldLayout] = {}
    for klass in reversed(cls.__mro__):
        if not dataclasses.is_dataclass(klass):
            continue
        try:
            filename = inspect.getsourcefile(klass)
        except TypeError:  # a built-in
            continue
        if filename is None:
            continue
        for name, here in _file_layout(filename).get(klass.__qualname__, {}).items():
            before = merged.get(name, FieldLayout(None, None))
            merged[name] = FieldLayout(here.doc or before.doc, here.group or before.group)
    return merged


def field_docs(cls: type) -> dict[str, str]:
    """Docstrings written under dataclass fields, for ``cls`` and its dataclass bases."""
    return {name: lay.doc for name, lay in field_layouts(cls).items() if lay.doc}

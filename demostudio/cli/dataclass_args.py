"""Command-line flags generated from a config dataclass (the project's one CLI mechanism).

Each field becomes ``--field-name`` (or a positional argument, with
``metadata={"positional": True}``) with the field's type, default and help text. The help
text is the field's docstring (a string literal right below it, as in Acme and CleanRL
configs) or ``metadata={"help": ...}``. Booleans get ``--flag / --no-flag``; ``Literal``
fields get choices; ``tuple[...]`` / ``list[...]`` fields take several values. Integer fields
named in :data:`SEED_FIELDS` are seeds: :func:`seed_int` bounds them. The comment headers the
fields sit under (``# --- replay ---``) group them in the help (:data:`GROUP_HEADER`), the
groups a user needs first at the top (:data:`GROUP_ORDER`). Every command's parser is a
:class:`CommandParser`: a usage error is one line.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import math
import re
import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from demostudio.cli.command_parser import CommandParser, close_matches, did_you_mean
from demostudio.cli.field_layout import GROUP_HEADER, FieldLayout, field_docs, field_layouts
from demostudio.episode.schema import MAX_GIVEN_SEED

GROUP_ORDER = (
    "run",
    "env",
    "demos",
    "algorithm",
    "replay",
    "network",
    "evaluation and gate",
    "distributed",
)
"""Groups of the help in this order (a title ``X: ...`` where X is), the ones a user needs
first at the top; other titles follow in the order their fields come."""


def _group_rank(title: str, first_seen: int) -> tuple[int, int]:
    head = title.split(":", 1)[0].strip()
    known = GROUP_ORDER.index(head) if head in GROUP_ORDER else len(GROUP_ORDER)
    return known, first_seen


def _unwrap_optional(tp: Any) -> tuple[Any, bool]:
    if get_origin(tp) in (Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        if len(args) == 1 and len(get_args(tp)) == 2:
            return args[0], True
    return tp, False


def finite_float(text: str) -> float:
    """A float flag's value: a number, never nan or +-inf (no setting means them)."""
    value = float(text)  # not a number: argparse says "invalid float value"
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


finite_float.__name__ = "float"  # argparse names the type in its messages

SEED_FIELDS = frozenset({"seed", "first_seed"})
"""Fields that are seeds, in every command (record, play, split, train, evaluate, watch,
compare): each parsed by :func:`seed_int`."""


def seed_int(text: str) -> int:
    """A seed flag's value: an integer from 0 to ``MAX_GIVEN_SEED`` (2**63-1, the schema's
    bound on a seed a user gives)."""
    value = int(text)  # not an integer: argparse says "invalid int value"
    if not 0 <= value <= MAX_GIVEN_SEED:
        raise argparse.ArgumentTypeError(
            f"expected a seed from 0 to {MAX_GIVEN_SEED} (2**63-1), got {text!r}"
        )
    return value


seed_int.__name__ = "int"


def _scalar_parser(tp: Any) -> Any:
    if tp is Path:
        return Path
    if tp is float:
        return finite_float
    if tp in (int, str):
        return tp
    raise TypeError(
        f"expected a field type of int, float, str, bool, Path, Literal, tuple "
        f"or list of those, got {tp!r}"
    )


def _none_or(parse: Any) -> Any:
    def convert(text: str) -> Any:
        return None if text.lower() in ("none", "null") else parse(text)

    convert.__name__ = getattr(parse, "__name__", "value")
    return convert


NEGATIVE_NUMBER = re.compile(
    r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^-(inf|infinity|nan)$", re.IGNORECASE
)
"""Every float syntax with a minus sign (``-1e3``, ``-2.5E-4``, ``-.5``, ``-inf``): a value,
never an option. argparse's own pattern knows only ``-1`` and ``-1.5``, so ``--v-min -1e3``
failed with ``expected one argument``; ``-inf`` reaches the float check and its message."""


def accept_negative_numbers(parser: argparse.ArgumentParser) -> None:
    """Make ``parser`` read every negative number as a value (see ``NEGATIVE_NUMBER``); no
    flag of the project looks like a number, so nothing is shadowed."""
    parser._negative_number_matcher = NEGATIVE_NUMBER  # argparse has no public switch


def add_dataclass_arguments(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, cls: type
) -> None:
    """Add one flag per field of dataclass ``cls`` to ``parser``. On a parser (not an
    argument group), the fields under comment headers go into one argument group per header
    title, in :data:`GROUP_ORDER`, and its usage line names the positionals and
    ``[options]`` instead of every flag."""
    accept_negative_numbers(parser)
    hints = get_type_hints(cls)
    layouts = field_layouts(cls)
    shown = [
        f for f in dataclasses.fields(cls) if f.init and f.metadata.get("cli", True) is not False
    ]
    groups = _argument_groups(parser, [layouts.get(f.name, _NO_LAYOUT).group for f in shown])
    for f in shown:
        tp, optional = _unwrap_optional(hints[f.name])
        flag = "--" + f.name.replace("_", "-")
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = None
        help_text = f.metadata.get("help") or layouts.get(f.name, _NO_LAYOUT).doc or ""
        kwargs: dict[str, Any] = {"dest": f.name, "default": default}
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            kwargs["required"] = True
        if tp is bool:
            kwargs["action"] = argparse.BooleanOptionalAction
            shown = flag if default else "--no-" + flag[2:]
            says_default = "default" in help_text.lower()
            kwargs["help"] = help_text if says_default else f"{help_text} (default: {shown})"
        else:
            origin = get_origin(tp)
            if origin is Literal:
                kwargs["choices"] = list(get_args(tp))
                kwargs["type"] = type(get_args(tp)[0])
            elif origin in (tuple, list):
                inner = [a for a in get_args(tp) if a is not Ellipsis]
                kwargs["type"] = _scalar_parser(inner[0] if inner else str)
                kwargs["nargs"] = "*"
            elif tp is int and f.name in SEED_FIELDS:
                kwargs["type"] = seed_int
            else:
                kwargs["type"] = _scalar_parser(tp)
            if optional:
                kwargs["type"] = _none_or(kwargs["type"])
            shown = "none" if default is None else default
            says_default = "default" in help_text.lower() or kwargs.get("required")
            kwargs["help"] = help_text if says_default else f"{help_text} (default: {shown})"
            kwargs["metavar"] = f.name.upper() if "choices" not in kwargs else None
        # argparse %-formats help texts: a docstring's "10%" must reach it as "10%%"
        kwargs["help"] = kwargs["help"].replace("%", "%%")
        if f.metadata.get("positional"):
            kwargs.pop("dest")
            kwargs.pop("required", None)
            kwargs.pop("metavar", None)
            has_default = (
                f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
            )
            if has_default and "nargs" not in kwargs:  # list fields keep nargs="*"
                kwargs["nargs"] = "?"
            parser.add_argument(f.name, **kwargs)
        else:
            target = groups.get(layouts.get(f.name, _NO_LAYOUT).group, parser)
            action = target.add_argument(flag, **kwargs)
            action.help = kwargs["help"]  # Python 3.10's BooleanOptionalAction adds its own
    if groups:
        parser.usage = _short_usage(parser)


_NO_LAYOUT = FieldLayout(None, None)


def _argument_groups(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, titles: list[str | None]
) -> dict[str | None, Any]:
    """Title -> a new argument group of ``parser``, in help order (none for a group)."""
    if not isinstance(parser, argparse.ArgumentParser):
        return {}
    seen = list(dict.fromkeys(t for t in titles if t is not None))
    ordered = sorted(seen, key=lambda t: _group_rank(t, seen.index(t)))
    return {title: parser.add_argument_group(title) for title in ordered}


def _short_usage(parser: argparse.ArgumentParser) -> str:
    """``%(prog)s [-h] [options] POSITIONALS``: the groups below list the options."""
    parts = []
    for action in parser._get_positional_actions():
        name = action.metavar or action.dest
        parts.append(
            {"?": f"[{name}]", "*": f"[{name} ...]", "+": f"{name} [{name} ...]"}.get(
                action.nargs, name
            )
        )
    return " ".join(["%(prog)s [-h] [options]", *parts])


def dataclass_from_args(cls: type, namespace: argparse.Namespace, **overrides: Any) -> Any:
    """Build ``cls`` from the parsed flags (tuple fields turned back into tuples)."""
    values = {
        f.name: getattr(namespace, f.name)
        for f in dataclasses.fields(cls)
        if f.init and hasattr(namespace, f.name)
    }
    return dataclass_from_values(cls, {**values, **overrides})


def explicit_fields(cls: type, argv: list[str]) -> set[str]:
    """The fields of ``cls`` whose flags appear in ``argv`` (parsed, so ``--no-x`` and
    ``--x=1`` count, and a bad value fails as it would in the real parse)."""
    parser = config_parser(cls, prog="")
    for action in parser._actions:  # argparse has no public way to drop every default
        if action.dest != "help":
            action.default = argparse.SUPPRESS
    return set(vars(parser.parse_args(argv)))


def dataclass_from_values(cls: type, values: dict[str, Any]) -> Any:
    """Build ``cls`` from JSON-like values (e.g. a saved config): strings become Paths and
    lists become tuples where the field's type says so; unknown keys are ignored."""
    hints = get_type_hints(cls)
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if not f.init or f.name not in values:
            continue
        value = values[f.name]
        tp, _ = _unwrap_optional(hints[f.name])
        if value is not None and tp is Path:
            value = Path(value)
        elif value is not None and get_origin(tp) in (tuple, list):
            inner = [a for a in get_args(tp) if a is not Ellipsis]
            convert = Path if inner and inner[0] is Path else (lambda x: x)
            value = get_origin(tp)(convert(x) for x in value)
        kwargs[f.name] = value
    return cls(**kwargs)


def config_parser(cls: type, prog: str, description: str | None = None) -> argparse.ArgumentParser:
    """A stand-alone parser for one config dataclass."""
    parser = CommandParser(
        prog=prog, description=description or (inspect.getdoc(cls) or "").split("\n\n")[0]
    )
    add_dataclass_arguments(parser, cls)
    return parser


__all__ = [
    "GROUP_HEADER",
    "GROUP_ORDER",
    "NEGATIVE_NUMBER",
    "SEED_FIELDS",
    "CommandParser",
    "FieldLayout",
    "accept_negative_numbers",
    "add_dataclass_arguments",
    "close_matches",
    "config_parser",
    "dataclass_from_args",
    "dataclass_from_values",
    "did_you_mean",
    "explicit_fields",
    "field_docs",
    "field_layouts",
    "seed_int",
]

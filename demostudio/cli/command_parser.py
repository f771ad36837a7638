"""The parser of every command: a usage error is one line, and a value outside a flag's
choices names the closest one (``did you mean 'r2d3'?``)."""

from __future__ import annotations

import argparse
import difflib
from typing import Any


def close_matches(word: str, candidates: Any, n: int = 3) -> list[str]:
    """Up to ``n`` of ``candidates`` that look like ``word`` (a typo, another case), best
    first: the rule env ids are matched by (``demostudio.episode.envs.closest_ids``)."""
    by_lower = {str(c).lower(): str(c) for c in candidates}
    found = difflib.get_close_matches(str(word).lower(), list(by_lower), n=n, cutoff=0.75)
    return [by_lower[m] for m in found]


def did_you_mean(word: str, candidates: Any) -> str:
    """``did you mean 'r2d3'?`` for the closest candidate, else ``choose from a, b, c``."""
    close = close_matches(word, candidates, n=1)
    if close:
        return f"did you mean {close[0]!r}?"
    return "choose from " + ", ".join(map(str, candidates))


class CommandParser(argparse.ArgumentParser):
    """The parser of every command: a usage error is one line (``demostudio record: error:
    ...``, exit 2), never the usage block; a value outside a flag's choices (a command, an
    algorithm, ``--policy``) names the closest choice, else the choices."""

    def error(self, message: str) -> Any:
        hint = (
            ""
            if "did you mean" in message or "invalid choice" in message
            else f" (`{self.prog} --help` lists them)"
        )
        self.exit(2, f"{self.prog}: error: {message}{hint}\n")

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        # argparse's hook for choices (its message lists every choice in quotes)
        if action.choices is not None and value not in action.choices:
            raise argparse.ArgumentError(
                action, f"invalid choice: {value!r} ({did_you_mean(value, action.choices)})"
            )

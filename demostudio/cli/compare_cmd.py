"""``demostudio compare``: train several algorithms on one env with the same demos, budget
and seeds; write a markdown table and a PNG of learning curves (see :mod:`agents.compare`).

torch and ``agents`` are imported inside the command only.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from demostudio.cli import CommandError, refuse_sample_demos
from demostudio.cli.dataclass_args import add_dataclass_arguments, dataclass_from_args


@dataclass
class CompareConfig:
    """Train each algorithm for several seeds on one env and compare them."""

    env: str = "MountainCar-v0"
    """Gymnasium env id."""
    demos: tuple[Path, ...] = ()
    """Demo episode files or folders (the same for every algorithm that uses demos)."""
    algos: tuple[str, ...] = ()
    """Algorithms to train (names of `demostudio train ALGO`; none: every registered one)."""
    seeds: int = 3
    """Seeds per algorithm."""
    first_seed: int = 0
    """Seeds are first_seed, first_seed + 1, ..."""
    budget: int = 20_000
    """Env steps per run (bc learns from the demos only and uses none)."""
    out: Path = Path("compare")
    """Output folder: runs/, results.jsonl (finished runs are skipped on a rerun, interrupted
    ones continue from their latest checkpoint), results.md, learning_curves.png."""
    threshold: float | None = None
    """Return that counts as reached (none: the env's reward threshold, else the demos' mean)."""
    eval_every: int = 2_000
    """Evaluate every this many env steps during training."""
    eval_episodes: int = 5
    """Episodes per evaluation during training."""
    final_eval_episodes: int = 10
    """Fresh episodes played by each final checkpoint for the table."""
    jobs: int = 1
    """Runs trained at once, one process each (one torch thread each)."""
    overrides: str = "{}"
    """Config fields as JSON per algorithm, '*' for all that have the field, e.g.
    '{"dqfd": {"pretrain_updates": 1000}, "*": {"num_actors": 2}}'."""
    device: Literal["auto", "cpu", "cuda"] = "cpu"
    """Torch device of every run."""
    restart: bool = False
    """Start interrupted runs again from nothing instead of continuing them."""


def cmd_compare(args: argparse.Namespace) -> int:
    cfg = dataclass_from_args(CompareConfig, args)
    refuse_sample_demos(cfg.out, "--out")
    if not cfg.demos:
        raise CommandError(
            "--demos: expected at least one demo file or folder, got none (compare measures "
            "every algorithm against the same demos: their returns set the threshold and the "
            "plot's band; for one algorithm without demos use `demostudio train`)"
        )
    from agents.compare import run_comparison
    from agents.registry import algorithm_names

    if not cfg.algos:
        cfg.algos = tuple(algorithm_names())
    try:
        _, table, png = run_comparison(cfg)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    print(table.read_text(encoding="utf-8"))
    print(f"table: {table}\ncurves: {png}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "compare",
        help="train several algorithms (seeds, same demos and budget); table + learning curves",
        description=CompareConfig.__doc__,
    )
    add_dataclass_arguments(p, CompareConfig)
    p.set_defaults(func=cmd_compare)

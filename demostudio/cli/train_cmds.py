"""``demostudio train ALGO`` and ``plot RUN_DIR...`` (``evaluate`` and ``watch`` are
:mod:`demostudio.cli.checkpoint_cmds`).

torch and ``agents`` are imported inside the commands only. ``train`` takes the algorithm
name and hands the remaining arguments to a parser generated from that algorithm's config
dataclass, so ``demostudio train r2d3 --help`` lists every field of R2D3's config.
"""

from __future__ import annotations

import argparse
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from demostudio.cli import CommandError, refuse_sample_demos
from demostudio.cli.checkpoint_cmds import note
from demostudio.cli.checkpoint_cmds import register as register_checkpoint_commands
from demostudio.cli.dataclass_args import (
    add_dataclass_arguments,
    close_matches,
    config_parser,
    dataclass_from_args,
    dataclass_from_values,
    explicit_fields,
)


def _help_with_algorithms(parser: argparse.ArgumentParser) -> None:
    """``train --help`` ends with the registry's algorithms, read only when help is shown
    (building the parser imports neither ``agents`` nor torch)."""
    plain = parser.format_help

    def format_help() -> str:
        from agents.registry import algorithm_summaries

        summaries = algorithm_summaries()
        width = max(map(len, summaries), default=0)
        rows = "".join(f"  {k:<{width}} {v}\n" for k, v in summaries.items())
        return f"{plain()}\nalgorithms:\n{rows}"

    parser.format_help = format_help  # type: ignore[method-assign]


def cmd_train(args: argparse.Namespace) -> int:
    from agents.registry import algorithm_names, get_algorithm

    try:
        entry = get_algorithm(args.algo)
    except KeyError:
        raise unknown_algorithm("train", args.algo, algorithm_names()) from None
    parser = algorithm_parser(args.algo, entry.config_cls)
    ns = parse_flags(parser, args.algo, args.args)
    cfg = dataclass_from_args(entry.config_cls, ns)
    refuse_sample_demos(cfg.run_dir or "runs", "--run-dir")  # default: runs/ here
    check_demo_paths(cfg)
    from agents.core.config import InteractConfig
    from agents.core.stopping import RunInterrupted

    # --resume is the interaction group's: BC, which trains in one go, has none
    resumable = isinstance(cfg, InteractConfig)
    try:
        if resumable and cfg.resume:
            fresh_ok = entry.agent_cls.resume_by_default
            cfg = resume_config(args.algo, entry.config_cls, cfg, ns, args.args, fresh_ok)
        result = entry.train(cfg)
    except (ValueError, FileNotFoundError, KeyError) as exc:
        raise CommandError(str(exc)) from None
    except RunInterrupted as stop:
        then = (
            f"`demostudio train {args.algo} --run-dir {stop.run_dir} --resume` continues it"
            if resumable
            else f"{args.algo} has no --resume: train again with another --run-dir"
        )
        return interrupted_line(stop, then)
    last = f", last eval mean return {result.evals[-1][1]:.2f}" if result.evals else ""
    print(
        f"{args.algo}: {result.env_steps} env steps, {result.updates} updates{last}; "
        f"run folder {result.run_dir}"
    )
    rule = result.stop_rule
    if result.solved_at is not None and rule is not None:
        print(
            f"learned: {rule.describe().removeprefix('stops once ')} at {result.solved_at} "
            f"env steps, so the run stopped there"
        )
    return 0


def check_demo_paths(cfg) -> None:
    """CommandError naming ``--demos`` when a given path is missing or holds no episode file:
    checked before torch is imported and the run is built, which take seconds. A given
    ``--env`` is checked first (a typo there is the error to tell)."""
    from agents.core.config import DemoConfig
    from demostudio.episode import ensure_registered, find_episodes

    demos = tuple(cfg.demos or ()) if isinstance(cfg, DemoConfig) else ()
    if not demos:
        return
    if cfg.env:
        ensure_registered(cfg.env)
    try:
        found = find_episodes(list(demos))
    except FileNotFoundError as exc:
        raise CommandError(f"--demos {exc}") from None
    if not found:
        raise CommandError(
            f"--demos {' '.join(map(str, demos))}: expected episode files (*.h5), got none"
        )


def unknown_algorithm(command: str, algo: str, names: list[str]) -> CommandError:
    """``train: expected an algorithm in [...], got 'R2D3' (did you mean 'r2d3'?)``."""
    close = close_matches(algo, names, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return CommandError(f"{command}: expected an algorithm in {names}, got {algo!r}{hint}")


def interrupted_line(stop, then: str) -> int:
    """Say where an interrupted run (:class:`~agents.core.stopping.RunInterrupted`) was saved
    and ``then`` how to go on; the command's exit status (128 + the signal: 130 for Ctrl-C,
    143 for SIGTERM, 129 for SIGHUP)."""
    from agents.core.stopping import exit_status, signal_name

    how = "" if stop.signum == signal.SIGINT else f" by {signal_name(stop.signum)}"
    print(
        f"demostudio: interrupted{how} at {stop.env_steps} env steps, saved "
        f"{stop.run_dir / 'checkpoints' / 'final.pt'}; {then}",
        file=sys.stderr,
    )
    return exit_status(stop)


def algorithm_parser(algo: str, cls: type, command: str = "train") -> argparse.ArgumentParser:
    """The flags of ``cls`` for ``demostudio COMMAND ALGO``; a bad flag or value is one line
    (``demostudio: error: COMMAND ALGO: ...``, exit 2), not the usage of a hundred flags."""
    parser = config_parser(cls, prog=f"demostudio {command} {algo}")

    def error(message: str):
        raise CommandError(f"{command} {algo}: {message} (`demostudio {command} {algo} --help` "
                           f"lists its flags)")  # fmt: skip

    parser.error = error  # type: ignore[method-assign]
    return parser


def parse_flags(
    parser: argparse.ArgumentParser, algo: str, argv: list[str], command: str = "train"
) -> argparse.Namespace:
    """``argv`` parsed; a flag ``algo`` lacks is named with the algorithms that take it."""
    ns, extra = parser.parse_known_args(argv)
    if extra:
        raise CommandError(unknown_flag_message(algo, extra, command))
    return ns


def unknown_flag_message(algo: str, extra: list[str], command: str = "train") -> str:
    """``train r2d2: --demos is not a flag of r2d2 (r2d3, dqfd, ... take --demos)``."""
    import dataclasses
    import difflib

    from agents.registry import algorithm_names, get_algorithm

    flags = [x.split("=", 1)[0] for x in extra if x.startswith("--")]
    if not flags:
        given = " ".join(extra)
        return f"{command} {algo}: unexpected arguments {given} (every value follows its flag)"
    flag = flags[0]
    name = flag[2:].replace("-", "_")
    takers, known = [], set()
    for other in algorithm_names():
        fields = {f.name for f in dataclasses.fields(get_algorithm(other).config_cls)}
        if other == algo:
            known = {p + f.replace("_", "-") for f in fields for p in ("--", "--no-")}
        if name in fields or (name.startswith("no_") and name[3:] in fields):
            takers.append(other)
    more = f" (and {len(flags) - 1} more)" if len(flags) > 1 else ""
    if takers:
        return (f"{command} {algo}: {flag}{more} is not a flag of {algo} ({', '.join(takers)} "
                f"take {flag})")  # fmt: skip
    close = difflib.get_close_matches(flag, sorted(known), n=1)
    hint = (
        f"did you mean {close[0]}?" if close else f"`demostudio {command} {algo} --help` lists them"
    )
    return f"{command} {algo}: {flag}{more} is not a flag of any algorithm ({hint})"


def resume_config(
    algo: str, cls: type, cfg, ns: argparse.Namespace, argv: list[str], fresh_ok: bool = False
):
    """The config ``--resume`` continues with (:func:`agents.core.resume.resumed_config`):
    the saved one with only the flags given on this command line (``argv``) changed."""
    from agents.core.resume import resumed_config
    from agents.core.run import default_run_dir, resolve_env

    if cfg.run_dir is None:
        resolve_env(cfg)  # the default folder is named after the env
    run_dir = Path(cfg.run_dir) if cfg.run_dir else default_run_dir(algo, cfg.env, cfg.seed)
    given = {k: v for k, v in vars(ns).items() if k in explicit_fields(cls, argv)}
    return resumed_config(
        run_dir, cfg, given, lambda values: dataclass_from_values(cls, values), fresh_ok
    )


@dataclass
class PlotConfig:
    """Draw learning curves (return vs env steps) of one or several runs into a PNG."""

    runs: tuple[Path, ...] = field(metadata={"positional": True})
    """Run folders (each with a metrics.jsonl)."""
    out: Path = Path("learning_curves.png")
    """PNG file to write."""
    metric: Literal["eval_return", "episode_return", "loss", "sps", "gate_worst"] = "eval_return"
    """What to plot against env steps (gate_worst: with --gate-episodes, the worst test
    episode of the learner's network before each evaluation, beside the deployed one's
    eval_return)."""
    title: str | None = None
    """Plot title (none: the metric's name)."""
    demos: tuple[Path, ...] = ()
    """Demo episode files or folders: their returns on the same axes (mean and min-max band,
    one per player), to see the agent against the person."""


def cmd_plot(args: argparse.Namespace) -> int:
    cfg = dataclass_from_args(PlotConfig, args)
    refuse_sample_demos(cfg.out, "--out")
    if not cfg.runs:
        raise CommandError("plot: expected at least one RUN_DIR, got none")
    from agents.core.plotting import plot_runs

    try:
        out = plot_runs(cfg.runs, cfg.out, cfg.metric, cfg.title, cfg.demos, note=note)
    except (ValueError, FileNotFoundError) as exc:
        raise CommandError(str(exc)) from None
    print(out)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "train",
        help="train an agent (r2d2, r2d3, ...) on an env, optionally from recorded demos",
        description="Train an agent. `demostudio train ALGO --help` lists ALGO's flags.",
        add_help=True,
    )
    p.add_argument("algo", metavar="ALGO", help="the algorithm (listed below)")
    _help_with_algorithms(p)
    p.add_argument("args", nargs=argparse.REMAINDER, help="the algorithm's flags")
    p.set_defaults(func=cmd_train)
    register_checkpoint_commands(subparsers)  # evaluate, watch: listed after train

    p = subparsers.add_parser("plot", help="learning curves of training runs into a PNG")
    add_dataclass_arguments(p, PlotConfig)
    p.set_defaults(func=cmd_plot)

"""``demostudio evaluate CHECKPOINT`` and ``watch CHECKPOINT``: a checkpoint's agent restored
(a note when its run was interrupted or its deployment gate chose the network) and played,
headless or in the window where a person can take over.

torch and ``agents`` are imported inside the commands only.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from demostudio.cli import CommandError, refuse_sample_demos
from demostudio.cli.dataclass_args import add_dataclass_arguments, dataclass_from_args

if TYPE_CHECKING:
    from demostudio.play.summary import PlayResult


@dataclass
class EvaluateConfig:
    """Play a checkpoint's agent for N episodes and print the mean return."""

    checkpoint: Path = field(metadata={"positional": True})
    """A checkpoint file (.pt) or a run folder (its final or newest checkpoint)."""
    episodes: int = 10
    """Episodes to play."""
    epsilon: float | None = None
    """Exploration epsilon (0: greedy; default: the run's --eval-epsilon, as its evaluations
    played)."""
    seed: int = 0
    """Reset seed of the first episode (then seed+1, ...)."""
    device: Literal["auto", "cpu", "cuda"] = "auto"
    """Torch device."""


def _check_epsilon(epsilon: float | None) -> None:
    if epsilon is not None and not 0.0 <= epsilon <= 1.0:
        raise CommandError(f"--epsilon: expected in [0, 1], got {epsilon}")


def _restore(checkpoint: Path, device: str, epsilon: float | None, seed: int):
    """The checkpoint's agent; one line on stderr when Ctrl-C stopped its run there."""
    from agents.core.checkpoint import CheckpointError
    from agents.core.restore import restore_agent
    from agents.core.run import resolve_device

    try:
        agent = restore_agent(checkpoint, resolve_device(device), epsilon, seed)
    except (CheckpointError, ValueError) as exc:
        raise CommandError(str(exc)) from None
    if agent.interrupted:
        steps = agent.counters.get("env_steps", 0)
        note(f"{agent.path}: its run was interrupted at {steps} env steps (not finished)")
    if agent.deployed is not None:
        version, score, passed = agent.deployed
        how = "" if passed else ", provisional: no network had passed its test"
        note(
            f"{agent.path}: plays the network its deployment gate kept (learner update "
            f"{version}, worst test episode {score:.2f}{how}); the learner went on to update "
            f"{agent.counters.get('updates', version)}"
        )
    return agent


def note(text: str) -> None:
    """One ``demostudio: note: ...`` line on stderr (the plot command's notes too)."""
    print(f"demostudio: note: {text}", file=sys.stderr)


def cmd_evaluate(args: argparse.Namespace) -> int:
    cfg = dataclass_from_args(EvaluateConfig, args)
    if cfg.episodes < 1:
        raise CommandError(f"--episodes: expected >= 1, got {cfg.episodes}")
    _check_epsilon(cfg.epsilon)
    from agents.core.evaluate import run_episodes

    agent = _restore(cfg.checkpoint, cfg.device, cfg.epsilon, cfg.seed)
    env = agent.make_env()
    try:
        result = run_episodes(env, agent.controller, cfg.episodes, seed=cfg.seed)
    finally:
        env.close()
    for i, (ret, length) in enumerate(zip(result.returns, result.lengths)):
        print(f"episode {i}: return {ret:.2f}  length {length}")
    steps = agent.counters.get("env_steps", 0)
    # success only where the env has a goal (agents.core.evaluate says which and how)
    goal = "" if result.successes is None else (
        f", {sum(result.successes)} of {len(result.successes)} reached the goal"
    )  # fmt: skip
    print(
        f"{agent.path} ({agent.algo}, {agent.env_id}, {steps} env steps): "
        f"mean return {result.mean:.2f} over {cfg.episodes} episodes{goal}"
    )
    return 0


@dataclass
class WatchConfig:
    """Show a checkpoint's agent playing in the window (T: take over from it and hand back),
    or play it headless. The window counts down before the first episode and stays on the
    last one until Esc, Enter, Space or closing it; each episode's return, length and who
    drove are printed. Quitting mid-episode asks only when you drove in it."""

    checkpoint: Path = field(metadata={"positional": True})
    """A checkpoint file (.pt) or a run folder."""
    # --- run -------------------------------------------------------------------------------
    episodes: int = 3
    """Episodes to play."""
    record: Path | None = None
    """Record the agent's episodes into RECORD/<env id> through the recording wrapper."""
    headless: bool = False
    """No window: play the episodes without a display and print their returns (recorded
    too with --record)."""
    # --- window ----------------------------------------------------------------------------
    fps: float | None = None
    """Window frame rate (none: the env's own)."""
    # --- run -------------------------------------------------------------------------------
    epsilon: float | None = None
    """Exploration epsilon (0: greedy; default: the run's --eval-epsilon, as its evaluations
    played)."""
    seed: int | None = None
    """First reset seed (none: fresh seeds)."""
    device: Literal["auto", "cpu", "cuda"] = "auto"
    """Torch device."""
    # --- window ----------------------------------------------------------------------------
    player: str = ""
    """Who takes over with T: stored as the episodes' player and their steps' actor
    person:PLAYER (default: your login name)."""
    keymap: Path | None = None
    """A key map JSON file for taking over (default: the env's own, else a bundled one)."""


def cmd_watch(args: argparse.Namespace) -> int:
    cfg = dataclass_from_args(WatchConfig, args)
    refuse_sample_demos(cfg.record, "--record")
    if cfg.episodes < 1:
        raise CommandError(f"--episodes: expected >= 1, got {cfg.episodes}")
    if cfg.fps is not None and not cfg.fps > 0:
        raise CommandError(f"--fps: expected a number > 0, got {cfg.fps}")
    _check_epsilon(cfg.epsilon)
    if cfg.headless:
        from agents.watching import watch_headless

        agent = _restore(cfg.checkpoint, cfg.device, cfg.epsilon, cfg.seed or 0)
        watched = watch_headless(agent, cfg.episodes, cfg.seed, cfg.record)
        for i, e in enumerate(watched):
            goal = {None: "", True: "  reached the goal", False: "  goal not reached"}
            where = "" if e.path is None else f"  {e.path}"
            print(f"episode {i}: return {e.episode_return:.2f}  length {e.length}"
                  f"{goal[e.reached_goal]}{where}")  # fmt: skip
        mean = sum(e.episode_return for e in watched) / len(watched)
        kept = "not recorded: --record DIR saves them" if cfg.record is None else (
            f"saved in {cfg.record / _env_folder(agent.env_id)}"
        )  # fmt: skip
        print(f"{len(watched)} episode(s) watched, mean return {mean:.2f} ({kept})")
        return 0
    try:
        from demostudio.play import KeyMapError, build_controller_session
    except ImportError:
        raise CommandError(
            "watch: the play window (demostudio.play.build_controller_session) is not "
            "available; use --headless"
        ) from None
    from demostudio.ui.display import require_display, shows_windows

    require_display("`watch --headless` plays the agent's episodes without one")
    agent = _restore(cfg.checkpoint, cfg.device, cfg.epsilon, cfg.seed or 0)
    out_dir = None if cfg.record is None else cfg.record / _env_folder(agent.env_id)
    try:
        session = build_controller_session(
            agent.env_id,
            agent.controller,
            out_dir=out_dir,
            episodes=cfg.episodes,
            fps=cfg.fps,
            env_kwargs=agent.env_kwargs,
            player=cfg.player,
            takeover=True,
            keymap=cfg.keymap,
            make=agent.make_env,  # the agent's wrappers (Atari frame stacks), as headless
        )
    except KeyMapError as exc:
        raise CommandError(str(exc)) from None
    if shows_windows():  # someone is watching: time to take over, and to read the end
        session.opts.start_countdown = WATCH_START_SECONDS
        session.opts.hold_at_end = True
    result = session.run()
    _print_watched(result, out_dir)
    return 0


WATCH_START_SECONDS = 3.0
"""The watch window counts down this long before the agent's first episode (T takes over)."""


def _print_watched(result: PlayResult, out_dir: Path | None) -> None:
    """One line per episode (return, length, who drove, its file), then the totals."""
    for e in result.log:
        how = "" if e.how in ("ended", "timed out") else f"  ({e.how})"
        where = f"  {e.path}" if e.path is not None else ""
        print(
            f"episode {e.number}: return {e.episode_return:.2f}  length {e.steps}  "
            f"{e.driver()}{how}{where}"
        )
    if out_dir is None:
        print(f"{len(result.log)} episode(s) watched (not recorded: --record DIR saves them)")
    else:
        print(f"{len(result.saved)} episode(s) saved in {out_dir}, {result.discarded} not saved")


def _env_folder(env_id: str) -> str:
    from demostudio.episode import env_folder_name

    return env_folder_name(env_id)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("evaluate", help="mean return of a checkpoint over N episodes")
    add_dataclass_arguments(p, EvaluateConfig)
    p.set_defaults(func=cmd_evaluate)

    p = subparsers.add_parser(
        "watch",
        help="show a checkpoint's agent playing, in a window or headless",
        description=" ".join((WatchConfig.__doc__ or "").split()),
    )
    add_dataclass_arguments(p, WatchConfig)
    p.set_defaults(func=cmd_watch)


__all__ = ["EvaluateConfig", "WatchConfig", "cmd_evaluate", "cmd_watch", "note", "register"]

"""``demostudio coach ALGO --env ENV [--demos DIR] ...``: train while watching the current
policy play, and correct it by taking over (T). The command parses the flags, checks what
only the app can (the key map, the sample demos) and builds the window; the trainer thread
is :mod:`agents.coach_run`'s, what the two threads share :mod:`agents.coach`'s.

torch and ``agents`` are imported inside the command only; ``demostudio coach ALGO --help``
lists the algorithm's training flags and the window's.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

from demostudio.cli import CommandError, refuse_sample_demos
from demostudio.cli.dataclass_args import (
    add_dataclass_arguments,
    dataclass_from_args,
)


@dataclass
class CoachSettings:
    """The coach window (the algorithm's training flags are the other flags)."""

    player: str = ""
    """Who takes over with T: their steps are recorded as person:PLAYER (default: your login
    name)."""
    keymap: Path | None = None
    """A key map JSON file for taking over (default: the env's own, else a bundled one)."""
    fps: float | None = None
    """Window steps per second (none: the env's real-time rate)."""
    zoom: float | None = None
    """Window zoom (none: fit the screen)."""
    coach_epsilon: float = 0.0
    """Exploration epsilon of the policy shown in the window (0: greedy)."""
    corrections: Path | None = None
    """Folder the corrected episodes are saved in (default RUN_DIR/corrections); --resume
    reads them back as demos."""

    def check(self) -> None:
        for name, v in (("fps", self.fps), ("zoom", self.zoom)):
            if v is not None and not v > 0:
                raise CommandError(f"--{name}: expected a number > 0, got {v}")
        if not 0.0 <= self.coach_epsilon <= 1.0:
            raise CommandError(f"--coach-epsilon: expected in [0, 1], got {self.coach_epsilon}")


def _coachable() -> list[str]:
    """The algorithms with a demo replay (the ones a coach can insert corrections into)."""
    from agents.core.config import DemoReplayConfig
    from agents.registry import algorithm_names, get_algorithm

    return [
        n for n in algorithm_names() if issubclass(get_algorithm(n).config_cls, DemoReplayConfig)
    ]


def parse_coach(algo: str, argv: list[str]) -> tuple[Any, Any, CoachSettings]:
    """(registry entry, training config, window settings) from the command line; with
    ``--resume`` the run's saved config with only the flags given changed."""
    from agents.coach_config import coach_config_cls  # no torch: --help is quick
    from agents.registry import algorithm_names, get_algorithm
    from demostudio.cli.train_cmds import (
        algorithm_parser,
        parse_flags,
        resume_config,
        unknown_algorithm,
    )

    try:
        entry = get_algorithm(algo)
    except KeyError:
        raise unknown_algorithm("coach", algo, algorithm_names()) from None
    try:
        cls = coach_config_cls(entry.config_cls)
    except TypeError:
        raise CommandError(
            f"coach: expected an algorithm with a demo replay for the corrections "
            f"({', '.join(_coachable())}), got {algo!r} (train it with `demostudio train {algo}`)"
        ) from None
    parser = algorithm_parser(algo, cls, command="coach")
    add_dataclass_arguments(parser.add_argument_group("coach window"), CoachSettings)
    ns = parse_flags(parser, algo, argv, command="coach")
    settings = dataclass_from_args(CoachSettings, ns)
    settings.check()
    cfg = dataclass_from_args(cls, ns)
    if cfg.resume:
        window_flags = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
        add_dataclass_arguments(window_flags, CoachSettings)
        _, training_argv = window_flags.parse_known_args(argv)
        try:
            cfg = resume_config(algo, cls, cfg, ns, training_argv)
        except (ValueError, FileNotFoundError) as exc:
            raise CommandError(str(exc)) from None
    return entry, cfg, settings


class Coaching(NamedTuple):
    """A coaching session under way: the trainer thread and the window's session."""

    training: Any
    """The :class:`agents.coach_run.CoachTraining`: the trainer thread and its link."""
    session: Any
    """The :class:`demostudio.play.PlaySession` (not started)."""
    corrections: Path
    """Where the corrected episodes are saved (in a folder per env)."""

    @property
    def link(self) -> Any:
        """The :class:`agents.coach.CoachLink` the window and the trainer share."""
        return self.training.link


def _user_error(exc: BaseException) -> BaseException:
    if isinstance(exc, (ValueError, FileNotFoundError, KeyError)):
        return CommandError(str(exc).strip("'\""))
    return exc


def _prepare(entry: Any, cfg: Any, settings: CoachSettings) -> Path:
    """Check what can be checked before training starts; the corrections folder."""
    from agents.coach_run import coached_folders, reuse_corrections, settle_config
    from demostudio.episode import EnvKwargsError, make_env_with_kwargs
    from demostudio.play.keymap import KeyMapError, resolve_keymap

    try:
        settle_config(cfg)
    except (ValueError, FileNotFoundError) as exc:
        raise CommandError(str(exc)) from None
    try:
        probe = make_env_with_kwargs(cfg.env, cfg.make_kwargs())
    except EnvKwargsError as exc:  # the env refused --env-kwargs
        raise CommandError(str(exc)) from None
    try:
        resolve_keymap(probe, cfg.env, settings.keymap)
    except KeyMapError as exc:
        raise CommandError(
            f"coach: expected a key map to take over {cfg.env} with: {exc}"
        ) from None
    finally:
        probe.close()
    corrections = coached_folders(entry.agent_cls.name, cfg, settings.corrections)
    refuse_sample_demos(cfg.run_dir, "--run-dir")
    refuse_sample_demos(corrections, "--corrections")
    note = reuse_corrections(cfg, corrections)
    if note is not None:
        print(note)
    return corrections


def start_coach(entry: Any, cfg: Any, settings: CoachSettings) -> Coaching:
    """Start training in a background thread (:mod:`agents.coach_run`) and build the window's
    session around the trainer's acting network (raises CommandError for what the user can
    fix)."""
    from agents.coach import CoachAgent, LiveDemoCutter
    from agents.coach_run import start_training
    from agents.core.stopping import request_stop, stop_signum
    from demostudio.episode import env_folder_name
    from demostudio.play import build_controller_session
    from demostudio.play.coach import CoachRecorder, CoachWindow

    corrections = _prepare(entry, cfg, settings)
    try:
        training = start_training(entry.agent_cls, cfg)
    except (ValueError, FileNotFoundError, KeyError) as exc:
        raise _user_error(exc) from None
    link = training.link
    try:
        controller = CoachAgent(link, settings.coach_epsilon, cfg.seed)
        session = build_controller_session(
            cfg.env,
            controller,
            out_dir=corrections / env_folder_name(cfg.env),
            episodes=None,
            fps=settings.fps,
            env_kwargs=cfg.make_kwargs(),
            player=settings.player,
            zoom=settings.zoom,
            takeover=True,
            keymap=settings.keymap,
            recorder=partial(CoachRecorder, tap=LiveDemoCutter(link, controller)),
            window=partial(
                CoachWindow, status=link.status_lines, failed=lambda: link.error is not None
            ),
        )
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):  # a stop signal: the run saves, interrupted
            request_stop(stop_signum(exc))
        training.abandon()
        raise
    session.opts.keep_on_quit = True  # closing the window keeps a corrected episode
    return Coaching(training, session, corrections)


def stop_coach(coaching: Coaching) -> Any:
    """End training (final evaluation and checkpoint) and return its TrainResult."""
    try:
        return coaching.training.stop()
    except (ValueError, FileNotFoundError, KeyError) as exc:
        raise _user_error(exc) from None


def cmd_coach(args: argparse.Namespace) -> int:
    entry, cfg, settings = parse_coach(args.algo, args.args)
    from agents.core.stopping import RunInterrupted, stop_signals
    from demostudio.cli.train_cmds import interrupted_line
    from demostudio.ui.display import require_display

    require_display(f"`demostudio train {args.algo}` trains (with --demos)")
    with stop_signals():  # Ctrl-C, SIGTERM, SIGHUP: the trainer saves an interrupted run
        try:
            return _coach(args.algo, entry, cfg, settings)
        except RunInterrupted as stop:
            resume = f"`demostudio coach {args.algo} --run-dir {stop.run_dir} --resume`"
            return interrupted_line(stop, f"{resume} continues it")


def _coach(algo: str, entry: Any, cfg: Any, settings: CoachSettings) -> int:
    from agents.core.stopping import request_stop, stop_signum

    coaching = start_coach(entry, cfg, settings)
    print(
        f"coaching {algo} on {cfg.env}: T takes over and hands back; closing the window "
        f"ends training (run folder {cfg.run_dir})"
    )
    try:
        played = coaching.session.run()
    except KeyboardInterrupt as stop:  # in the window's thread; the trainer stops unfinished
        request_stop(stop_signum(stop))
        print("stopping training: saving its checkpoint, marked interrupted ...")
        stop_coach(coaching)  # RunInterrupted, unless training had ended
        raise
    except BaseException:
        print("stopping training: final evaluation and checkpoint ...")
        stop_coach(coaching)
        raise
    print("stopping training: final evaluation and checkpoint ...")
    result = stop_coach(coaching)
    link = coaching.link
    print(
        f"{algo}: {result.env_steps} env steps, {result.updates} updates; "
        f"{_count(link.stretches, 'corrected stretch', 'es')} ({link.inserted} demo "
        f"sequences), {_count(len(played.saved), 'episode')} saved in {coaching.corrections}; "
        f"run folder "
        f"{result.run_dir}"
    )
    return 0


def _count(n: int, noun: str, plural: str = "s") -> str:
    return f"{n} {noun}{'' if n == 1 else plural}"


def _help_with_coachable(parser: argparse.ArgumentParser) -> None:
    plain = parser.format_help

    def format_help() -> str:
        return f"{plain()}\nalgorithms with a demo replay: {', '.join(_coachable())}\n"

    parser.format_help = format_help  # type: ignore[method-assign]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "coach",
        help="train while watching the policy play; take over (T) to correct it",
        description=(
            "Train ALGO in the background while the window shows its current policy playing; "
            "T takes over, and every corrected stretch goes into the trainer's demo replay at "
            "once (and is saved). Closing the window ends training with a final checkpoint. "
            "`demostudio coach ALGO --help` lists ALGO's flags."
        ),
    )
    p.add_argument("algo", metavar="ALGO", help="the algorithm (one with a demo replay)")
    _help_with_coachable(p)
    p.add_argument("args", nargs=argparse.REMAINDER, help="the algorithm's and the window's flags")
    p.set_defaults(func=cmd_coach)

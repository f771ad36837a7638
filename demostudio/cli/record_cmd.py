"""``demostudio record ENV``: record episodes headless with a scripted or random policy, the
scripted one as itself (``--style expert``) or played like a person (``--style human``)."""

from __future__ import annotations

import argparse
import contextlib
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from demostudio.cli.dataclass_args import add_dataclass_arguments, dataclass_from_args
from demostudio.episode import RecordEpisodes, ensure_registered, env_folder_name, make_env
from demostudio.ui.settings import recordings_root


@dataclass
class RecordConfig:
    """Record episodes headless with a scripted or random policy."""

    env: str = field(metadata={"positional": True})
    """Gymnasium env id, e.g. MountainCar-v0."""
    policy: Literal["scripted", "random"] = "scripted"
    """Which controller plays."""
    episodes: int = 5
    """How many episodes to record."""
    out: Path = field(default_factory=recordings_root)
    """Root folder; episodes go to OUT/<env id with / as ->/. Your recordings folder unless
    given (`demostudio launch --out DIR` changes it)."""
    seed: int | None = None
    """First reset seed (then seed+1, ...); none draws a fresh 64-bit seed per episode. The
    human style's draws in an episode come from its reset seed, so a seed replays them."""
    player: str = ""
    """Stored as the episodes' player."""
    frames: bool = True
    """Record the rendered RGB frames."""

    # Human style: the scripted expert played like a person at the keyboard (see
    # demostudio/controllers/human.py); each knob's default depends on whether the game is
    # real-time (MountainCar) or turn-based (MiniGrid).
    style: Literal["expert", "human"] = "expert"
    """expert: the scripted controller's own actions; human: played through the game's key map
    with a person's idle steps, reaction delay, late key releases, detours and random actions
    (controller `keyboard`, player `scripted-human` unless --player is given)."""
    reaction_delay: int | None = None
    """Human style: mean steps before the keys follow the expert's change of action (default
    4 real-time, ~130 ms at 30 steps/s; a turn-based game waits for each press)."""
    idle_start: float | None = None
    """Human style: mean idle steps before the first action (default 10 real-time, 2
    turn-based: presses of the no-op key)."""
    idle_between: float | None = None
    """Human style: mean idle steps after each sub-goal of a grid task, e.g. key picked up or
    door opened (default 5 real-time, 1 turn-based)."""
    detour_rate: float | None = None
    """Human style: chance per step of a detour, a few steps off the plan then corrected
    (default 0.01 real-time, 0.05 turn-based)."""
    random_rate: float | None = None
    """Human style: chance per step of one random action other than the expert's (default
    0.02 real-time, 0.04 turn-based)."""
    late_release: float | None = None
    """Human style: mean extra steps a held key stays down, the previous action going on
    (default 1 real-time, 0.3 turn-based: a held move overshooting)."""


HUMAN_KNOBS = (
    "reaction_delay",
    "idle_start",
    "idle_between",
    "detour_rate",
    "random_rate",
    "late_release",
)
HUMAN_PLAYER = "scripted-human"
"""The player of human-style episodes when --player is not given."""


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def human_style(cfg: RecordConfig, turn_based: bool) -> Any:
    """The human style's knobs: the game kind's defaults, with the ones given."""
    from demostudio.controllers.human import HumanStyle

    given = {k: getattr(cfg, k) for k in HUMAN_KNOBS if getattr(cfg, k) is not None}
    return HumanStyle(**{**HumanStyle.default(turn_based).as_json(), **given})


def _recording(cfg: RecordConfig, env: Any) -> tuple[Any, RecordEpisodes]:
    """The controller and the recorder: the scripted or random policy as itself, or (human
    style) the scripted one played through the game's key map, as the play window records
    a person (key map, keys held per step, fps, turn-based or not)."""
    from demostudio.controllers import RandomController, scripted_controller

    folder = cfg.out / env_folder_name(cfg.env)
    if cfg.policy == "random":
        controller = RandomController(cfg.seed)
    else:
        controller = scripted_controller(cfg.env)
    if cfg.style == "expert":
        rec = RecordEpisodes(
            env, folder, controller=controller.name, player=cfg.player, record_frames=cfg.frames
        )
        return controller, rec
    from demostudio.cli import CommandError
    from demostudio.controllers.human import HumanPlayer
    from demostudio.play.keymap import KeyMapError, resolve_keymap
    from demostudio.play.timing import realtime_fps, turn_based_default

    turn_based = turn_based_default(cfg.env)
    fps = realtime_fps(env)
    try:
        keymap = resolve_keymap(env, cfg.env)
        player = HumanPlayer(
            controller,
            keymap,
            human_style(cfg, turn_based),
            env.action_space,
            turn_based=turn_based,
            fps=fps,
            seed=cfg.seed,
        )
    except KeyMapError as exc:
        raise CommandError(f"--style human: {exc}") from None
    except ValueError as exc:  # a key map without keys for some action
        raise CommandError(f"--style human: {cfg.env}: {exc}") from None
    rec = RecordEpisodes(
        env,
        folder,
        controller=player.name,
        player=cfg.player or HUMAN_PLAYER,
        key_map=keymap.to_json(),
        fps=None if turn_based else fps,
        record_frames=cfg.frames,
        attrs={
            "turn_based": turn_based,
            "key_map_source": keymap.source,
            "human_style": player.describe(),
        },
        clock=player.clock,
    )
    return player, rec


def record(cfg: RecordConfig, progress: bool = True) -> list[Path]:
    """Record ``cfg.episodes`` episodes; returns the saved files."""
    from tqdm import tqdm

    from demostudio.episode.recorder import fresh_seed

    env = make_env(cfg.env, render_mode="rgb_array" if cfg.frames else None)
    try:
        controller, rec = _recording(cfg, env)
    except BaseException:
        env.close()
        raise
    start_episode = getattr(controller, "start_episode", None)
    try:
        for i in tqdm(
            range(cfg.episodes), desc=f"record {cfg.env}", unit="ep", disable=not progress
        ):
            seed = fresh_seed() if cfg.seed is None else cfg.seed + i
            if start_episode is not None:
                start_episode(seed)
            obs, info = rec.reset(seed=seed)
            controller.reset(rec, obs, info)
            done = False
            while not done:
                action = controller.act(rec, obs)
                rec.set_keys(getattr(controller, "last_keys", ()))
                obs, _, terminated, truncated, _ = rec.step(action)
                done = terminated or truncated
    finally:
        rec.close()
    return rec.saved


def cmd_record(args: argparse.Namespace) -> int:
    from demostudio.cli import CommandError, refuse_sample_demos
    from demostudio.controllers import SCRIPTED
    from demostudio.episode import read_summary

    cfg = dataclass_from_args(RecordConfig, args)
    refuse_sample_demos(cfg.out, "--out")
    if cfg.episodes < 1:
        raise CommandError(f"--episodes: expected a number >= 1, got {cfg.episodes}")
    ensure_registered(cfg.env)
    if cfg.policy == "scripted" and cfg.env not in SCRIPTED:
        raise CommandError(
            f"--policy scripted: expected an env with a scripted controller "
            f"({', '.join(SCRIPTED)}), got {cfg.env!r}; record it with --policy random"
        )
    _check_style(cfg)
    with _sigterm_stops():
        saved = record(cfg)
    for path in saved:
        s = read_summary(path)
        print(f"{path}  length {s.length}  return {s.total_return:.2f}")
    return 0


def _check_style(cfg: RecordConfig) -> None:
    """The human style's flags: only with it, only for a scripted policy, each in range."""
    from demostudio.cli import CommandError
    from demostudio.controllers.human import HumanStyleError
    from demostudio.play.timing import turn_based_default

    given = [k for k in HUMAN_KNOBS if getattr(cfg, k) is not None]
    if cfg.style == "expert":
        if given:
            raise CommandError(
                f"{_flag(given[0])}: expected --style human with it, got --style expert"
            )
        return
    if cfg.policy != "scripted":
        raise CommandError(f"--style human: expected --policy scripted, got --policy {cfg.policy}")
    try:
        human_style(cfg, turn_based_default(cfg.env))
    except HumanStyleError as exc:
        raise CommandError(f"{_flag(exc.field)}: {str(exc).split(': ', 1)[1]}") from None


@contextlib.contextmanager
def _sigterm_stops() -> Iterator[None]:
    """SIGTERM stops the recording as Ctrl-C does: the episode in progress is saved
    (truncated), and a wait on the disk is interrupted. Set before the env starts SDL, which
    otherwise takes SIGTERM for itself (it only queues a quit event, which nothing reads
    here) and leaves a process that `kill` cannot stop."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "record", help="record episodes headless with a scripted or random policy"
    )
    add_dataclass_arguments(p, RecordConfig)
    p.set_defaults(func=cmd_record)

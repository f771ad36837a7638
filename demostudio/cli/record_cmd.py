"""``demostudio record ENV``: record episodes headless with a scripted or random policy."""

from __future__ import annotations

import argparse
import contextlib
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

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
    """First reset seed (then seed+1, ...); none draws a fresh 64-bit seed per episode."""
    player: str = ""
    """Stored as the episodes' player."""
    frames: bool = True
    """Record the rendered RGB frames."""


def record(cfg: RecordConfig, progress: bool = True) -> list[Path]:
    """Record ``cfg.episodes`` episodes; returns the saved files."""
    from tqdm import tqdm

    from demostudio.controllers import RandomController, scripted_controller

    controller = (
        scripted_controller(cfg.env) if cfg.policy == "scripted" else RandomController(cfg.seed)
    )
    env = make_env(cfg.env, render_mode="rgb_array" if cfg.frames else None)
    rec = RecordEpisodes(
        env,
        cfg.out / env_folder_name(cfg.env),
        controller=controller.name,
        player=cfg.player,
        record_frames=cfg.frames,
    )
    try:
        for i in tqdm(
            range(cfg.episodes), desc=f"record {cfg.env}", unit="ep", disable=not progress
        ):
            seed = None if cfg.seed is None else cfg.seed + i
            obs, info = rec.reset(seed=seed)
            controller.reset(rec, obs, info)
            done = False
            while not done:
                obs, _, terminated, truncated, _ = rec.step(controller.act(rec, obs))
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
    with _sigterm_stops():
        saved = record(cfg)
    for path in saved:
        s = read_summary(path)
        print(f"{path}  length {s.length}  return {s.total_return:.2f}")
    return 0


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

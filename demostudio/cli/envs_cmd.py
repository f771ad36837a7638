"""``demostudio envs [PATTERN]``: the registered env ids, grouped by family, and the extras
that install the families that are missing."""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import textwrap
from dataclasses import dataclass, field
from typing import NamedTuple

from demostudio.cli.dataclass_args import add_dataclass_arguments, dataclass_from_args


class Family(NamedTuple):
    name: str
    module: str
    """The entry points' module prefix (which package provides the envs)."""
    needs: str
    """A module the family needs to run (its ids can be registered without it)."""
    install: str
    """What to install when ``needs`` is missing."""


FAMILIES: tuple[Family, ...] = (
    Family("classic control", "gymnasium.envs.classic_control", "pygame", "pip install -e ."),
    Family("Box2D", "gymnasium.envs.box2d", "Box2D", "pip install -e ."),
    Family("toy text", "gymnasium.envs.toy_text", "gymnasium", ""),
    Family("Atari", "ale_py", "ale_py", "pip install -e '.[atari]'"),
    Family("MiniGrid, BabyAI", "minigrid", "minigrid", "pip install -e '.[minigrid]'"),
    Family("MuJoCo", "gymnasium.envs.mujoco", "mujoco", "pip install 'gymnasium[mujoco]'"),
    Family("JAX (phys2d, tabular)", "gymnasium.envs.", "jax", "pip install 'gymnasium[jax]'"),
)
OTHER = Family("other", "", "", "")
UNBROKEN = {"break_on_hyphens": False, "break_long_words": False}


@dataclass
class EnvsConfig:
    """List the registered Gymnasium env ids by family, and how to install the missing ones."""

    pattern: str = field(default="", metadata={"positional": True})
    """Only ids containing this text (any case), e.g. pong or DoorKey."""


def family_of(entry_point: object) -> Family:
    """The family whose module provides ``entry_point`` (a "module:Class" string or a class)."""
    module = entry_point if isinstance(entry_point, str) else getattr(entry_point, "__module__", "")
    for fam in FAMILIES:
        if str(module).startswith(fam.module):
            return fam
    return OTHER


def installed(fam: Family) -> bool:
    return not fam.needs or importlib.util.find_spec(fam.needs) is not None


def grouped_ids(pattern: str = "") -> dict[Family, list[str]]:
    """Registered ids (the installed plugins' included) containing ``pattern``, by family."""
    import gymnasium as gym

    from demostudio.episode.envs import registered_ids

    groups: dict[Family, list[str]] = {fam: [] for fam in (*FAMILIES, OTHER)}
    for env_id in registered_ids():
        if pattern.lower() in env_id.lower():
            groups[family_of(gym.registry[env_id].entry_point)].append(env_id)
    return groups


def cmd_envs(args: argparse.Namespace) -> int:
    cfg = dataclass_from_args(EnvsConfig, args)
    groups = grouped_ids(cfg.pattern)
    if not any(groups.values()):
        from demostudio.cli import CommandError

        raise CommandError(f"envs: expected a text some env id contains, got {cfg.pattern!r}")
    width = min(100, shutil.get_terminal_size((100, 24)).columns)
    missing: list[Family] = []
    for fam, ids in groups.items():
        if not installed(fam):
            missing.append(fam)
        if not ids:
            continue
        state = "" if installed(fam) else f"; not playable here: {fam.install}"
        print(f"{fam.name} ({len(ids)}{state}):")
        text = "  ".join(ids)
        print(textwrap.fill(text, width, initial_indent="  ", subsequent_indent="  ", **UNBROKEN))
    for fam in missing:
        if fam.module in ("ale_py", "minigrid") and not groups[fam]:
            print(f"{fam.name}: not installed ({fam.install})")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "envs", help="list the registered env ids by family (and the extras for the rest)"
    )
    add_dataclass_arguments(p, EnvsConfig)
    p.set_defaults(func=cmd_envs)

"""The config group of demonstrations read from episode files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal

from agents.core.config.base import ConfigGroup

UNCHANGED_STEPS = ("skip", "skip-loops", "learn")
"""``--demo-unchanged-steps``: leave the demo steps that changed nothing out of learning
(with ``skip-loops``, also the round trips back to an observation), or learn from them like
any other."""


def check_unchanged_choice(value: str) -> None:
    """ValueError naming the flag unless ``value`` is one of :data:`UNCHANGED_STEPS`."""
    if value not in UNCHANGED_STEPS:
        raise ValueError(
            f"--demo-unchanged-steps: expected one of {list(UNCHANGED_STEPS)}, got {value!r}"
        )


@dataclass
class DemoConfig(ConfigGroup):
    """Demonstrations read from episode files."""

    # --- demos -----------------------------------------------------------------------------
    demos: tuple[Path, ...] = ()
    """Demo episode files or folders (searched recursively for *.h5)."""
    demo_env_override: str | None = None
    """Accept demos recorded on this env id instead of --env (spaces must still match)."""
    demo_steps: Literal["person", "all"] = "person"
    """Which steps are demonstrations. person: only the steps a person took where a file has
    any (a take-over file gives the person's stretches, the agent's steps before each being
    burn-in context; a keyboard recording is all the person's anyway), and every step of a
    file no person acted in (a script's or an agent's demos). all: every step of every file,
    the agent's steps in take-over files too."""
    demo_unchanged_steps: Literal["skip", "skip-loops", "learn"] = "skip-loops"
    """Demo steps that changed nothing. skip: the single steps after which the observation
    is the same, with no reward and the episode going on (a pause, a press that did
    nothing, a walk into a wall), are not learned from (the recurrent state still reads
    them): they teach only waiting, and a greedy policy that copies a wait loops on it until
    the time limit. skip-loops: also every stretch that comes back to an observation it
    started from with no reward on the way (a wrong turn turned back, a walk away and
    back), which got nowhere either. learn: learned like every other step."""

    demos_required: ClassVar[bool] = True
    """A run needs --demos (False: ``demostudio coach``, whose corrections fill them;
    RND-PPO, whose demo pre-training is optional; Reactor, where --demos adds a demo
    replay)."""

    def check(self) -> None:
        check_unchanged_choice(self.demo_unchanged_steps)
        if self.demos_required and not self.demos:
            raise ValueError("--demos: expected at least one demo file or folder, got none")

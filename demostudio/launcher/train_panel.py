"""The Train panel's state and its pure update, :func:`process_event` (as the launcher's).

Two views. The setup view: the recordings that will be used, the algorithm, the budget with
its estimated duration, Start, and the game's runs. Keys: Tab moves between the algorithms,
the budget and the runs; Up/Down pick in the focused one; Left/Right or -/+ change the budget;
I includes the files left out (tagged bad, flagged by quality); Enter starts (on the runs
list: opens the run); Ctrl+C copies the command Start runs; Esc goes back to the launcher.
A click picks an algorithm, changes the budget, starts, or opens a run.

The run view (a run opened): its live curve and S stop, R resume, W watch, C coach,
E evaluate, F the run folder, Ctrl+C copies the run's command; Esc or Backspace goes back
to the setup view.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import NamedTuple

import pygame

from demostudio.launcher.algorithms import AlgoInfo
from demostudio.launcher.curve import Band
from demostudio.launcher.demoset import DemoSet
from demostudio.launcher.estimate import Estimate
from demostudio.launcher.runs import RunRow


class TrainFocus(Enum):
    ALGOS = "algorithms"
    BUDGET = "budget"
    RUNS = "runs"


FOCUS_ORDER = (TrainFocus.ALGOS, TrainFocus.BUDGET, TrainFocus.RUNS)

BUDGETS = {
    "env_steps": (
        1_000,
        2_000,
        5_000,
        10_000,
        20_000,
        50_000,
        100_000,
        200_000,
        500_000,
        1_000_000,
        2_000_000,
        5_000_000,
        10_000_000,
        20_000_000,
        50_000_000,
    ),
    "updates": (100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000),
}
"""The budgets offered, per clock."""

RUN_KEYS = {"s": "stop", "r": "resume", "w": "watch", "c": "coach", "e": "evaluate", "f": "folder"}
"""The run view's keys and the action each asks for."""


class TrainAction(NamedTuple):
    """What the panel's controller should do next."""

    kind: str
    """``close``, ``start``, ``copy`` (the command shown), or a run's: ``stop``, ``resume``,
    ``watch``, ``coach``, ``evaluate``, ``folder``."""
    run: Path | None = None


class TrainLayout(NamedTuple):
    """Where things are (computed by the view from the window size), for mouse hit tests."""

    back: pygame.Rect
    algo_rows: list[pygame.Rect]
    include_box: pygame.Rect
    budget_minus: pygame.Rect
    budget_plus: pygame.Rect
    start: pygame.Rect
    run_rows: list[pygame.Rect]
    """The visible runs, from ``TrainState.run_scroll`` on."""
    buttons: dict[str, pygame.Rect]
    """The run view's buttons by action (``stop``, ``watch``, ...)."""


@dataclass
class TrainState:
    env_id: str
    title: str
    player: str = ""
    algos: list[AlgoInfo] = field(default_factory=list)
    algo: str = ""
    """The selected algorithm's name ("" until the algorithms are read)."""
    budgets: dict[str, int] = field(default_factory=dict)
    """The budget chosen per algorithm (its default until changed)."""
    demos: DemoSet | None = None
    """The game's recordings (None while they are being read)."""
    include_left_out: bool = False
    focus: TrainFocus = TrainFocus.ALGOS
    runs: list[RunRow] = field(default_factory=list)
    """The game's runs, newest first."""
    run_index: int = 0
    run_scroll: int = 0
    opened: Path | None = None
    """The run shown in the run view (None: the setup view)."""
    estimate: Estimate | None = None
    """The selected algorithm's duration for its budget (None: not known yet)."""
    measuring: str = ""
    """The calibration run under way, shown while there is no estimate."""
    preview: str = ""
    """The command Start would run."""
    notes: dict[Path, str] = field(default_factory=dict)
    """The last result line per run (an evaluation's mean return)."""
    bands: dict[Path, tuple[list[Band], str, tuple[str, ...]]] = field(default_factory=dict)
    """The demos' returns per opened run, why they are missing if they are, and the demo
    paths they were read from."""
    console: list[str] = field(default_factory=list)
    """The last lines the opened run's process printed."""
    actions: list[TrainAction] = field(default_factory=list)
    status: str = ""
    status_error: bool = False

    # ---- the algorithms -----------------------------------------------------------------
    @property
    def have_demos(self) -> bool:
        return self.demos is not None and bool(self.demos.used(self.include_left_out))

    def set_algos(self, algos: list[AlgoInfo]) -> None:
        """The algorithms once read; R2D3 is preselected when there are demos, else the
        first that needs none."""
        self.algos = list(algos)
        self.budgets = {a.name: self._preset(a) for a in algos}
        if not self.algo:
            self.preselect()

    def preselect(self) -> None:
        names = [a.name for a in self.algos]
        usable = [a.name for a in self.algos if a.usable(self.have_demos)]
        if self.have_demos and "r2d3" in names:
            self.algo = "r2d3"
        elif usable:
            self.algo = usable[0]
        elif names:
            self.algo = names[0]

    @staticmethod
    def _preset(info: AlgoInfo) -> int:
        presets = BUDGETS[info.clock]
        return min(presets, key=lambda b: abs(b - info.default_budget))

    @property
    def info(self) -> AlgoInfo | None:
        return next((a for a in self.algos if a.name == self.algo), None)

    @property
    def algo_index(self) -> int:
        names = [a.name for a in self.algos]
        return names.index(self.algo) if self.algo in names else 0

    def pick_algo(self, index: int) -> None:
        if self.algos:
            self.algo = self.algos[max(0, min(len(self.algos) - 1, index))].name

    # ---- the budget ---------------------------------------------------------------------
    @property
    def budget(self) -> int:
        info = self.info
        return self.budgets.get(info.name, info.default_budget) if info else 0

    def step_budget(self, delta: int) -> None:
        info = self.info
        if info is None:
            return
        presets = BUDGETS[info.clock]
        now = self.budget
        i = min(range(len(presets)), key=lambda k: abs(presets[k] - now))
        self.budgets[info.name] = presets[max(0, min(len(presets) - 1, i + delta))]

    # ---- the runs -----------------------------------------------------------------------
    def set_runs(self, runs: list[RunRow], keep: Path | None = None) -> None:
        """The runs list refreshed; the selection stays on the same run (or on ``keep``)."""
        chosen = keep or self.selected_run_path
        self.runs = list(runs)
        paths = [r.path for r in self.runs]
        if chosen in paths:
            self.run_index = paths.index(chosen)
        self.run_index = max(0, min(self.run_index, len(self.runs) - 1))

    @property
    def selected_run_path(self) -> Path | None:
        if 0 <= self.run_index < len(self.runs):
            return self.runs[self.run_index].path
        return None

    @property
    def opened_run(self) -> RunRow | None:
        return next((r for r in self.runs if r.path == self.opened), None)

    def pick_run(self, index: int, visible: int = 8) -> None:
        if not self.runs:
            return
        self.run_index = max(0, min(len(self.runs) - 1, index))
        if self.run_index < self.run_scroll:
            self.run_scroll = self.run_index
        elif self.run_index >= self.run_scroll + visible:
            self.run_scroll = self.run_index - visible + 1

    def open_run(self, path: Path | None) -> None:
        if path is not None:
            self.opened = path
            self.say("")

    # ---- actions ------------------------------------------------------------------------
    def start(self) -> None:
        info = self.info
        if info is None:
            self.say("The algorithms are still being read: a moment", error=True)
        elif self.demos is None and info.demos != "none":
            self.say("The recordings are still being read: a moment", error=True)
        elif not info.usable(self.have_demos):
            self.say(
                f"{info.name} learns from demos and {self.env_id} has none to use: play and "
                f"record some first, include the files left out (I), or pick an algorithm "
                f"that needs none",
                error=True,
            )
        else:
            self.actions.append(TrainAction("start"))

    def run_action(self, kind: str) -> None:
        if self.opened is not None:
            self.actions.append(TrainAction(kind, self.opened))

    def say(self, text: str, error: bool = False) -> None:
        self.status, self.status_error = text, error

    def take_actions(self) -> list[TrainAction]:
        out, self.actions = self.actions, []
        return out


def _key_setup(state: TrainState, name: str, shift: bool, visible: int) -> None:
    if name == "escape":
        state.actions.append(TrainAction("close"))
    elif name == "tab":
        i = FOCUS_ORDER.index(state.focus)
        state.focus = FOCUS_ORDER[(i + (-1 if shift else 1)) % len(FOCUS_ORDER)]
    elif name in ("return", "[enter]"):
        if state.focus is TrainFocus.RUNS and state.runs:
            state.open_run(state.selected_run_path)
        else:
            state.start()
    elif name in ("-", "[-]", "+", "=", "[+]") or (
        state.focus is TrainFocus.BUDGET and name in ("left", "right", "up", "down")
    ):
        state.step_budget(1 if name in ("+", "=", "[+]", "right", "up") else -1)
    elif name in ("left", "right"):
        return
    elif name == "i":
        state.include_left_out = not state.include_left_out
    elif name in ("up", "down", "page up", "page down"):
        delta = {"up": -1, "down": 1, "page up": -5, "page down": 5}[name]
        if state.focus is TrainFocus.RUNS:
            state.pick_run(state.run_index + delta, visible)
        else:
            state.pick_algo(state.algo_index + delta)


def _click_setup(state: TrainState, pos: tuple[int, int], layout: TrainLayout) -> None:
    if layout.back.collidepoint(pos):
        state.actions.append(TrainAction("close"))
        return
    for i, rect in enumerate(layout.algo_rows):
        if rect.collidepoint(pos):
            state.focus = TrainFocus.ALGOS
            state.pick_algo(i)
            return
    for i, rect in enumerate(layout.run_rows):
        if rect.collidepoint(pos) and state.run_scroll + i < len(state.runs):
            state.focus = TrainFocus.RUNS
            state.pick_run(state.run_scroll + i, len(layout.run_rows))
            state.open_run(state.selected_run_path)
            return
    if layout.include_box.collidepoint(pos):
        state.include_left_out = not state.include_left_out
    elif layout.budget_minus.collidepoint(pos) or layout.budget_plus.collidepoint(pos):
        state.focus = TrainFocus.BUDGET
        state.step_budget(1 if layout.budget_plus.collidepoint(pos) else -1)
    elif layout.start.collidepoint(pos):
        state.start()


def _click_run(state: TrainState, pos: tuple[int, int], layout: TrainLayout) -> None:
    if layout.back.collidepoint(pos):
        state.opened = None
        return
    for kind, rect in layout.buttons.items():
        if rect.collidepoint(pos):
            state.run_action(kind)
            return


def process_event(state: TrainState, event: pygame.event.Event, layout: TrainLayout) -> TrainState:
    """Update ``state`` for one pygame event."""
    if event.type == pygame.KEYDOWN:
        name = pygame.key.name(event.key)
        mod = getattr(event, "mod", 0)
        if mod & pygame.KMOD_CTRL and name == "c":
            state.actions.append(TrainAction("copy", state.opened))
            return state
        if mod & (pygame.KMOD_CTRL | pygame.KMOD_ALT | pygame.KMOD_META):
            return state  # the panel's letters are plain keys
        if state.opened is None:
            _key_setup(state, name, bool(mod & pygame.KMOD_SHIFT), max(1, len(layout.run_rows)))
        elif name in ("escape", "backspace"):
            state.opened = None
        elif name in RUN_KEYS:
            state.run_action(RUN_KEYS[name])
    elif event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
        if state.opened is None:
            _click_setup(state, event.pos, layout)
        else:
            _click_run(state, event.pos, layout)
    elif event.type == pygame.MOUSEWHEEL and state.opened is None:
        if state.focus is TrainFocus.RUNS:
            state.pick_run(state.run_index - int(event.y), max(1, len(layout.run_rows)))
        else:
            state.pick_algo(state.algo_index - int(event.y))
    return state


__all__ = [
    "BUDGETS",
    "FOCUS_ORDER",
    "RUN_KEYS",
    "TrainAction",
    "TrainFocus",
    "TrainLayout",
    "TrainState",
    "process_event",
]

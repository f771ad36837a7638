"""Scripted play that looks like a person's at the keyboard: :class:`HumanPlayer` wraps any
scripted controller (the "expert") and plays through the game's key map as a person would.

What it adds to the expert's choices (the knobs are :class:`HumanStyle`; each episode draws
from its own generator, seeded from the episode's reset seed):

* idle steps at the start and after each sub-goal (a grid changed by the expert: key picked
  up, door or box opened): the key map's no-op (no key held; on a turn-based game, a press
  of the no-op's key, MiniGrid's Enter "done", which changes nothing);
* reaction delay (real-time games): the keys follow a change of the expert's action some
  steps later;
* a held key released late (the previous action goes on a few steps; on a turn-based game
  the key repeat of a held key overshoots a run of the same move);
* detours: a few steps off the expert's plan (on a grid a wrong turn and a step or two
  forward; in real time a wrong key held), after which the expert, asked afresh from the
  true state, corrects them;
* random actions: one step of another action than the expert's.

The expert is asked at every step (a planner re-plans from the true state), so what it would
have done is known at each step; :attr:`HumanPlayer.log` keeps it beside what was played and
why. Each action becomes the keys that give it in the key map (:attr:`last_keys`, stored with
the step like the window's), and the played action is the key map's action for those keys.
:attr:`HumanPlayer.clock` gives the recorder the times a person would produce: one step per
``1/fps`` (with the play loop's jitter) on a real-time game, a person's pace between key
presses on a turn-based one; nothing sleeps.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any, NamedTuple, Protocol

import gymnasium as gym
import numpy as np

EXPERT, IDLE, DELAY, LATE, DETOUR, RANDOM = (
    "expert",
    "idle",
    "delay",
    "late-release",
    "detour",
    "random",
)
"""Why a step's action was played (:attr:`HumanPlayer.log`)."""

SALT = 0x48554D414E
"""Mixed into the reset seed so the person's draws are not the env's own stream."""
GRID_DETOUR_FORWARDS = (1, 2)
"""A wrong turn on a grid is followed by this many steps forward (drawn)."""
REALTIME_DETOUR_STEPS = (4, 10)
"""A wrong key held in real time lasts this many steps (drawn)."""
FRAME_JITTER = 0.03
"""Relative spread of a real-time step's duration (the play loop's clock is that steady)."""
PRESS_SECONDS = 0.35
"""Median time between two key presses of a turn-based player (log-normal, sigma 0.4)."""


class HumanStyleError(ValueError):
    """A knob out of range; ``field`` names it."""

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(f"{field}: {message}")


@dataclass(frozen=True)
class HumanStyle:
    """How a scripted player departs from its expert (see the module docstring)."""

    reaction_delay: int
    """Real-time games: mean steps before the keys follow a change of the expert's action."""
    idle_start: float
    """Mean idle steps before the first action of an episode."""
    idle_between: float
    """Mean idle steps after each sub-goal the expert reaches."""
    detour_rate: float
    """Chance per step of starting a detour (a few steps off the plan, then corrected)."""
    random_rate: float
    """Chance per step of playing another action than the expert's for one step."""
    late_release: float
    """Mean extra steps a held key stays down after the person meant to let it go."""

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise HumanStyleError(f.name, f"expected a number, got {value!r}")
            if not math.isfinite(value) or value < 0:
                raise HumanStyleError(f.name, f"expected a finite number >= 0, got {value}")
        if not isinstance(self.reaction_delay, int):
            raise HumanStyleError(
                "reaction_delay", f"expected a whole number of steps, got {self.reaction_delay}"
            )
        for name in ("detour_rate", "random_rate"):
            if getattr(self, name) > 1:
                raise HumanStyleError(
                    name, f"expected a chance from 0 to 1, got {getattr(self, name)}"
                )
        if self.detour_rate + self.random_rate > 1:
            raise HumanStyleError(
                "random_rate",
                f"expected detour_rate + random_rate <= 1, got "
                f"{self.detour_rate} + {self.random_rate}",
            )

    @staticmethod
    def default(turn_based: bool) -> HumanStyle:
        """A person at the keyboard: on a real-time game at ~30 steps/s a reaction of ~130 ms
        (a person sees the swing coming), a third of a second before starting, a key let go
        ~30 ms late, a slip every few seconds (MountainCar: the flag in ~160 steps where
        the expert takes ~120); on a turn-based one a couple of idle presses at the start,
        a slip every 10-20 presses."""
        if turn_based:
            return TURN_BASED_DEFAULT
        return REAL_TIME_DEFAULT

    def as_json(self) -> dict[str, float]:
        return asdict(self)


REAL_TIME_DEFAULT = HumanStyle(
    reaction_delay=4, idle_start=10, idle_between=5, detour_rate=0.01, random_rate=0.02,
    late_release=1,
)  # fmt: skip
TURN_BASED_DEFAULT = HumanStyle(
    reaction_delay=0, idle_start=2, idle_between=1, detour_rate=0.05, random_rate=0.04,
    late_release=0.3,
)  # fmt: skip


class KeyMapLike(Protocol):
    """What :class:`HumanPlayer` needs of :class:`demostudio.play.keymap.KeyMap`."""

    bindings: Sequence[Any]
    noop: Any

    def action_for(self, held: Sequence[str]) -> Any: ...


class StepNote(NamedTuple):
    """One played step: the expert's choice, the action played and why."""

    expert: int
    played: int
    kind: str


class SyntheticClock:
    """The recorder's clock for a scripted person: advanced by the player, never slept on."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now

    def start(self) -> None:
        """A new episode starts now (real time, or later if the last one ran ahead)."""
        self.now = max(self.now, time.time())

    def advance(self, seconds: float) -> None:
        self.now += seconds


class HumanPlayer:
    """Plays ``expert`` (a scripted controller) like a person at the keyboard; follows the
    Controller protocol. ``keymap`` is the game's key map, ``turn_based`` and ``fps`` the
    game's play mode and real-time rate, as the play window uses them."""

    name = "keyboard"

    def __init__(
        self,
        expert: Any,
        keymap: KeyMapLike,
        style: HumanStyle,
        action_space: gym.Space,
        *,
        turn_based: bool,
        fps: float,
        seed: int | None = None,
    ):
        if not isinstance(action_space, gym.spaces.Discrete):
            raise ValueError(
                f"expected a Discrete action space to play by keys, got {action_space}"
            )
        self.expert = expert
        self.keymap = keymap
        self.style = style
        self.turn_based = turn_based
        self.fps = float(fps)
        self.actions = [int(action_space.start) + i for i in range(int(action_space.n))]
        self.keys_for = {a: self._keys_of(a) for a in self.actions}
        missing = [a for a in self.actions if keymap.action_for(self.keys_for[a]) != a]
        if missing:
            raise ValueError(
                f"expected a key map with keys for every action, got none for {missing}"
            )
        self.noop = int(keymap.noop)
        self.clock = SyntheticClock()
        self.rng = np.random.default_rng([SALT] if seed is None else [SALT, seed])
        self.last_keys: tuple[str, ...] = ()
        self.log: list[StepNote] = []
        self._info: dict = {}
        self._queue: deque[tuple[int, str]] = deque()
        self._grid_moves: tuple[int, int, int] | None = None
        self._signature: Any = None
        self._held = self.noop
        self._pending: tuple[int, int] | None = None  # (step the switch is due, late steps)

    # ---- keys ----------------------------------------------------------------------------------

    def _keys_of(self, action: int) -> tuple[str, ...]:
        """The keys a person holds for ``action``: none for the no-op in real time, else the
        shortest binding that gives it."""
        if not self.turn_based and self.keymap.action_for(()) == action:
            return ()
        bound = [b for b in self.keymap.bindings if b.action == action]
        for b in sorted(bound, key=lambda b: (len(b.keys), sorted(b.keys))):
            keys = tuple(sorted(b.keys))
            if self.keymap.action_for(keys) == action:
                return keys
        return ()  # no key gives it (refused by the constructor)

    # ---- episodes ------------------------------------------------------------------------------

    def start_episode(self, seed: int) -> None:
        """Before the env resets with ``seed``: the person's draws for this episode come
        from it, and its clock starts now."""
        self.rng = np.random.default_rng([SALT, int(seed)])
        self.clock.start()

    def reset(self, env: gym.Env, observation: Any, info: dict) -> None:
        self._info = info
        self.expert.reset(env, observation, info)
        self.log = []
        self._queue.clear()
        self._held = self.noop
        self._pending = None
        self._signature = _signature(env)
        self._grid_moves = _grid_moves(env)
        self._queue_idle(self.style.idle_start)

    def _queue_idle(self, mean: float) -> None:
        self._queue.extend([(self.noop, IDLE)] * int(self.rng.poisson(mean)))

    # ---- acting --------------------------------------------------------------------------------

    def act(self, env: gym.Env, observation: Any) -> int:
        self.expert.reset(env, observation, self._info)  # a planner re-plans from here
        expert = int(self.expert.act(env, observation))
        signature = _signature(env)
        if signature != self._signature and self.log and self.log[-1].kind == EXPERT:
            self._queue_idle(self.style.idle_between)  # a sub-goal reached: a pause
        self._signature = signature
        if self._queue:
            action, kind = self._queue.popleft()
        elif self.turn_based:
            action, kind = self._turn(expert)
        else:
            action, kind = self._real_time(expert)
        return self._play(expert, action, kind)

    def _play(self, expert: int, action: int, kind: str) -> int:
        keys = self.keys_for[action]
        played = int(self.keymap.action_for(keys))
        self.last_keys = keys
        self.log.append(StepNote(expert, played, kind))
        self.clock.advance(self._duration(kind))
        return played

    def _duration(self, kind: str) -> float:
        if not self.turn_based:
            jitter = float(np.clip(self.rng.normal(0.0, FRAME_JITTER), -0.5, 0.5))
            return (1.0 + jitter) / self.fps
        pause = 3.0 if kind == IDLE else 1.0
        return pause * PRESS_SECONDS * float(np.exp(self.rng.normal(0.0, 0.4)))

    def _slip(self, expert: int) -> tuple[int, str] | None:
        """A random action or the start of a detour, at their rates (None: neither)."""
        u = float(self.rng.random())
        if u < self.style.random_rate:
            return int(self.rng.choice([a for a in self.actions if a != expert])), RANDOM
        if u < self.style.random_rate + self.style.detour_rate:
            self._queue.extend(self._detour(expert))
            return self._queue.popleft()
        return None

    def _detour(self, expert: int) -> list[tuple[int, str]]:
        if self._grid_moves is not None:
            left, right, forward = self._grid_moves
            turn = {left: right, right: left}.get(expert, int(self.rng.choice([left, right])))
            n = int(self.rng.integers(GRID_DETOUR_FORWARDS[0], GRID_DETOUR_FORWARDS[1] + 1))
            return [(turn, DETOUR)] + [(forward, DETOUR)] * n
        wrong = int(self.rng.choice([a for a in self.actions if a != expert]))
        n = int(self.rng.integers(REALTIME_DETOUR_STEPS[0], REALTIME_DETOUR_STEPS[1] + 1))
        self._held, self._pending = wrong, None  # then the person notices and corrects
        return [(wrong, DETOUR)] * n

    def _turn(self, expert: int) -> tuple[int, str]:
        """Turn-based: the expert's press, a slip, or a held key's repeat overshooting."""
        last = self.log[-2:]
        if (
            len(last) == 2
            and all(n.kind == EXPERT and n.played == last[0].played for n in last)
            and expert != last[-1].played
        ):
            extra = int(self.rng.poisson(self.style.late_release))
            if extra:
                self._queue.extend([(last[-1].played, LATE)] * extra)
                return self._queue.popleft()
        return self._slip(expert) or (expert, EXPERT)

    def _real_time(self, expert: int) -> tuple[int, str]:
        """Real time: the held keys follow the expert after the reaction delay (and a late
        release); meanwhile slips happen."""
        slip = self._slip(expert)
        if slip is not None:
            return slip
        step = len(self.log)
        if expert == self._held:
            self._pending = None
            return self._held, EXPERT
        if self._pending is None:
            d = self.style.reaction_delay
            react = int(self.rng.integers(d - d // 2, d + d // 2 + 1))
            late = int(self.rng.poisson(self.style.late_release)) if self._held != self.noop else 0
            self._pending = (step + react, late)
        due, late = self._pending
        if step < due:
            return self._held, DELAY
        if step < due + late:
            return self._held, LATE
        self._held, self._pending = expert, None
        return expert, EXPERT

    def describe(self) -> dict[str, Any]:
        """What the episode files store as ``human_style``: the expert and the knobs."""
        return {"expert": str(self.expert.name), **self.style.as_json()}


def _signature(env: gym.Env) -> Any:
    """What changes when a grid task reaches a sub-goal (the grid's objects, what is
    carried); None for other envs (no sub-goals)."""
    base = env.unwrapped
    grid = getattr(base, "grid", None)
    if grid is None or not hasattr(base, "carrying"):
        return None
    carrying = base.carrying
    held = None if carrying is None else (carrying.type, carrying.color)
    return grid.encode().tobytes(), held


def _grid_moves(env: gym.Env) -> tuple[int, int, int] | None:
    """MiniGrid's (left, right, forward) actions, or None when the env has no such turns."""
    actions = getattr(env.unwrapped, "actions", None)
    try:
        return int(actions.left), int(actions.right), int(actions.forward)
    except AttributeError:
        return None


__all__ = [
    "DELAY",
    "DETOUR",
    "EXPERT",
    "IDLE",
    "LATE",
    "RANDOM",
    "HumanPlayer",
    "HumanStyle",
    "HumanStyleError",
    "StepNote",
    "SyntheticClock",
]

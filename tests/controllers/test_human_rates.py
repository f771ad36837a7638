"""Human-style recordings depart from the expert at the rates set: each knob alone, a seeded
run recorded through ``demostudio record``'s own code, and every step of every file compared
with the expert's own choice there (a fresh planner asked from the re-simulated true state).

Bounds are three standard deviations of the knob's draw (Poisson counts, binomial chances)
over the steps or events measured."""

from __future__ import annotations

import math
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

from demostudio.cli.record_cmd import HUMAN_KNOBS, RecordConfig, record
from demostudio.controllers import scripted_controller
from demostudio.controllers.grid import FORWARD, LEFT, RIGHT
from demostudio.episode import load_episode, make_env

DOORKEY = "MiniGrid-DoorKey-8x8-v0"
MOUNTAINCAR = "MountainCar-v0"
GRID_NOOP = 6  # MiniGrid "done", the key map's no-op (Enter)
CAR_NOOP = 1  # MountainCar "don't accelerate": no key held


class Trace(NamedTuple):
    """One recorded episode beside its expert: ``[T]`` arrays."""

    played: np.ndarray
    expert: np.ndarray
    """The expert's choice at each step, asked afresh from the re-simulated state."""
    subgoal: np.ndarray
    """The step was the expert's own and changed the grid (key picked up, door opened)."""
    keys: list[list[str]]
    solved: bool
    """The episode ended by reaching its goal, not by running out of steps."""


def _grid_state(env) -> object:
    base = env.unwrapped
    grid = getattr(base, "grid", None)
    if grid is None:
        return None
    held = None if base.carrying is None else (base.carrying.type, base.carrying.color)
    return grid.encode().tobytes(), held


def _trace(path: Path) -> Trace:
    data = load_episode(path)
    s = data.summary
    env = make_env(s.env_id)
    expert = scripted_controller(s.env_id)
    obs, info = env.reset(seed=s.seed)
    experts, subgoal = [], []
    for action in data.actions.astype(int):
        expert.reset(env, obs, info)  # a planner forgets its plan: its choice from here
        choice = int(expert.act(env, obs))
        before = _grid_state(env)
        obs, *_ = env.step(int(action))
        experts.append(choice)
        subgoal.append(action == choice and before is not None and _grid_state(env) != before)
    env.close()
    return Trace(
        data.actions.astype(int),
        np.array(experts),
        np.array(subgoal),
        data.keys,
        bool(s.terminated),  # MountainCar: the flag reached; these grids: the goal
    )


def _record(tmp_path: Path, env: str, episodes: int, **knobs: float) -> list[Trace]:
    values = {k: 0 for k in HUMAN_KNOBS} | knobs  # one knob at a time, the others off
    cfg = RecordConfig(
        env=env, style="human", episodes=episodes, seed=100, out=tmp_path, frames=False, **values
    )
    return [_trace(p) for p in record(cfg, progress=False)]


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """(start, length) of each run of True in ``mask``."""
    out, start = [], None
    for i, m in enumerate([*mask.tolist(), False]):
        if m and start is None:
            start = i
        elif not m and start is not None:
            out.append((start, i - start))
            start = None
    return out


def _near_poisson(samples: list[int], mean: float) -> None:
    assert len(samples) >= 20
    bound = 3 * math.sqrt(mean / len(samples))
    assert abs(np.mean(samples) - mean) <= bound, (np.mean(samples), mean, len(samples))


def _near_chance(events: int, trials: int, p: float) -> None:
    assert trials >= 200
    bound = 3 * math.sqrt(p * (1 - p) * trials)
    assert abs(events - p * trials) <= bound, (events, trials, p)


# ---- turn-based (DoorKey) ---------------------------------------------------------------------


def test_idle_presses_open_the_episode_at_the_rate_set(tmp_path):
    traces = _record(tmp_path, DOORKEY, 30, idle_start=3)
    starts = []
    for t in traces:
        off = t.played != t.expert
        lead = _runs(off)[0] if off[0] else (0, 0)
        starts.append(lead[1])
        assert np.all(t.played[: lead[1]] == GRID_NOOP)
        assert all(k == ["return"] for k in t.keys[: lead[1]])  # Enter pressed, like a person
        assert not off[lead[1] :].any()  # the rest is the expert's
        assert t.solved
    _near_poisson(starts, 3)


def test_idle_presses_follow_each_subgoal_at_the_rate_set(tmp_path):
    traces = _record(tmp_path, DOORKEY, 30, idle_between=2)
    pauses = []
    for t in traces:
        off = t.played != t.expert
        assert np.all(t.played[off] == GRID_NOOP)
        mine = []
        for i in np.flatnonzero(t.subgoal[:-1]):
            j = i + 1
            while j < len(off) and off[j]:
                j += 1
            mine.append(j - i - 1)
        assert len(mine) == 2  # DoorKey: the key picked up, the door opened
        assert sum(mine) == off.sum()  # every idle press comes right after a sub-goal
        pauses += mine
    _near_poisson(pauses, 2)


def test_random_actions_at_the_rate_set(tmp_path):
    traces = _record(tmp_path, DOORKEY, 30, random_rate=0.1)
    off = np.concatenate([t.played != t.expert for t in traces])
    _near_chance(int(off.sum()), len(off), 0.1)
    assert all(t.solved for t in traces)  # each slip corrected by the expert from there


def test_detours_are_wrong_turns_then_corrected_at_the_rate_set(tmp_path):
    traces = _record(tmp_path, DOORKEY, 30, detour_rate=0.08)
    detours = eligible = 0
    for t in traces:
        off = t.played != t.expert
        turns = np.flatnonzero(off & np.isin(t.played, [LEFT, RIGHT]))  # a wrong turn...
        assert all(t.played[i + 1] == FORWARD for i in turns if i + 1 < len(off))  # ...walked on
        assert not np.any(off & ~np.isin(t.played, [LEFT, RIGHT, FORWARD]))
        detours += len(turns)
        eligible += len(off) - int(np.sum(off & (t.played == FORWARD)))  # not inside one
        assert t.solved  # each corrected by the expert from where it led
    _near_chance(detours, eligible, 0.08)


def test_a_held_move_overshoots_at_the_rate_set(tmp_path):
    traces = _record(tmp_path, DOORKEY, 30, late_release=1.0)
    extra = []
    for t in traces:
        off = t.played != t.expert
        for i in range(2, len(off)):
            held = t.played[i - 1]
            if off[i - 2] or off[i - 1] or t.played[i - 2] != held or t.expert[i] == held:
                continue  # not the end of a run of one key held (on the plan)
            j = i
            while j < len(off) and off[j] and t.played[j] == held:
                j += 1
            extra.append(j - i)
        assert t.solved
    _near_poisson(extra, 1.0)


# ---- real-time (MountainCar) --------------------------------------------------------------------


def _switches(t: Trace) -> list[tuple[int, int]]:
    """(step, steps since the expert first wanted it) for each change of the played action."""
    out = []
    for i in range(len(t.played)):
        before = t.played[i - 1] if i else CAR_NOOP
        if t.played[i] == before:
            continue
        start = i
        while start > 0 and t.expert[start - 1] == t.played[i]:
            start -= 1
        out.append((i, i - start))
    return out


def test_real_time_keys_follow_the_expert_after_the_reaction_delay(tmp_path):
    traces = _record(tmp_path, MOUNTAINCAR, 12, reaction_delay=6)
    delays = [d for t in traces for _, d in _switches(t)]
    assert min(delays) >= 3 and max(delays) <= 9  # drawn from 6 -+ 3
    assert abs(np.mean(delays) - 6) <= 3 * math.sqrt(3.0 / len(delays))  # uniform 3..9: var 4
    for t in traces:
        assert t.solved
        lag = np.flatnonzero(t.played != t.expert)  # the old key still held, nothing else
        assert lag.size and all(t.played[i] == (t.played[i - 1] if i else CAR_NOOP) for i in lag)


def test_real_time_held_key_released_late_at_the_rate_set(tmp_path):
    traces = _record(tmp_path, MOUNTAINCAR, 20, late_release=2.0)
    late = []
    for t in traces:
        for i, d in _switches(t):
            if i and t.played[i - 1] != CAR_NOOP:  # a key was held: released late
                late.append(d)
            else:
                assert d == 0  # nothing to let go of: pressed at once (no reaction delay set)
    _near_poisson(late, 2.0)


def test_real_time_idle_start_holds_no_key(tmp_path):
    traces = _record(tmp_path, MOUNTAINCAR, 20, idle_start=15)
    starts = []
    for t in traces:
        n = next(i for i, k in enumerate(t.keys) if k)
        assert np.all(t.played[:n] == CAR_NOOP)
        assert np.all(t.played[n:] == t.expert[n:])
        starts.append(n)
    _near_poisson(starts, 15)


@pytest.mark.parametrize(("knob", "rate"), [("random_rate", 0.05), ("detour_rate", 0.02)])
def test_real_time_slips_at_the_rate_set(tmp_path, knob, rate):
    traces = _record(tmp_path, MOUNTAINCAR, 12, **{knob: rate})
    events = eligible = 0
    for t in traces:
        off = t.played != t.expert
        runs = _runs(off)
        if knob == "random_rate":
            events += int(off.sum())
            eligible += len(off)
            assert t.solved
        else:  # a wrong key held up to 10 steps (it can cost the flag within 200 steps)
            assert all(n <= 10 for _, n in runs)
            events += len(runs)
            eligible += len(off) - int(off.sum())
    _near_chance(events, eligible, rate)

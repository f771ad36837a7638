"""``--demo-unchanged-steps``: demo steps that changed nothing (a pause, a press that did
nothing, a walk into a wall) are found exactly, left out of what the losses learn by default
while the recurrent state still reads them, and learned from with ``learn``; ``skip-loops``
also leaves out round trips back to an observation; an expert's demos, which have none,
load exactly as they would without the option."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import numpy as np
import pytest
import torch

from agents.bc import BCConfig
from agents.core.demos import DemoFiles, demo_sequences, load_demos
from agents.core.networks import HeadSpec, NetworkSpec, RecurrentNetwork
from agents.core.preprocess import make_preprocessor
from agents.core.sequences import EndBehavior
from agents.core.unchanged import round_trip_steps, unchanged_steps
from agents.r2d3 import R2D3Config
from demostudio.assets import SAMPLE_DEMOS
from demostudio.episode import find_episodes, load_episode, make_env

DOORKEY = "MiniGrid-DoorKey-8x8-v0"
HUMAN = SAMPLE_DEMOS / "human-style" / DOORKEY
EXPERT = SAMPLE_DEMOS / DOORKEY
DONE = 6  # MiniGrid's "done": changes nothing in DoorKey


def _episodes(folder):
    return [load_episode(p) for p in find_episodes([folder])]


def _same_obs(episode, t: int) -> bool:
    obs = episode.observations
    return all(np.array_equal(obs[k][t], obs[k][t + 1]) for k in obs)


def test_human_style_pauses_and_bumps_are_found_exactly():
    found = 0
    for e in _episodes(HUMAN):
        still = unchanged_steps(e)
        actions = np.asarray(e.actions).reshape(len(e))
        assert still[0]  # the idle start
        assert still[actions == DONE].all()  # every pause
        for t in range(len(e)):  # exactly the steps with nothing changed, paid or ended
            quiet = e.rewards[t] == 0 and not e.terminations[t] and not e.truncations[t]
            assert still[t] == (quiet and _same_obs(e, t))
        found += int(still.sum())
    assert found > int(sum((np.asarray(e.actions) == DONE).sum() for e in _episodes(HUMAN)))


def test_a_reward_an_end_or_any_changed_leaf_is_a_change():
    e = _episodes(HUMAN)[0]
    t = int(np.flatnonzero(unchanged_steps(e))[0])
    one = np.zeros(len(e), bool)
    one[t] = True
    paid = dataclasses.replace(e, rewards=np.where(one, 0.5, e.rewards))
    ended = dataclasses.replace(e, terminations=e.terminations | one)
    cut = dataclasses.replace(e, truncations=e.truncations | one)
    turned = {k: np.array(v, copy=True) for k, v in e.observations.items()}
    turned["direction"][t + 1] = (turned["direction"][t] + 1) % 4
    moved = dataclasses.replace(e, observations=turned)
    for changed in (paid, ended, cut, moved):
        assert not unchanged_steps(changed)[t]


def test_expert_demos_have_none_and_load_the_same_either_way():
    for env_id, folder in ((DOORKEY, EXPERT), ("MountainCar-v0", SAMPLE_DEMOS / "MountainCar-v0")):
        env = make_env(env_id)
        skip = load_demos([folder], env_id, env, unchanged="skip")
        learn = load_demos([folder], env_id, env, unchanged="learn")
        assert skip.unchanged == 0 and skip.steps == learn.steps > 0
        for i in range(len(skip.episodes)):
            assert np.array_equal(skip.mask(i), learn.mask(i))
            assert not unchanged_steps(skip.episodes[i]).any()
        if env_id == DOORKEY:  # the demo replay is built from exactly the same sequences
            same, other = (
                _sequences(skip.subset(range(3)), env),
                _sequences(learn.subset(range(3)), env),
            )
            for name in ("action", "reward", "mask", "prev_action"):
                assert np.array_equal(getattr(same, name), getattr(other, name))
            for k in same.obs:
                assert np.array_equal(same.obs[k], other.obs[k])


def _sequences(demos, env):
    torch.manual_seed(0)
    pre = make_preprocessor(env.observation_space)
    spec = NetworkSpec(pre.spec, 7, 8, 8, True, {"q": HeadSpec("dueling_q")})
    return demo_sequences(demos, pre, RecurrentNetwork(spec), 4 + 8 + 1, 4,
                          EndBehavior.ZERO_PAD, torch.device("cpu"), burn_in=4)  # fmt: skip


def test_skip_learns_no_unchanged_step_but_keeps_it_as_context():
    env = make_env(DOORKEY)
    skip = load_demos([HUMAN], DOORKEY, env, unchanged="skip")
    learn = load_demos([HUMAN], DOORKEY, env, unchanged="learn")
    still = [unchanged_steps(e) for e in skip.episodes]
    assert skip.unchanged == sum(int(s.sum()) for s in still) > 0
    assert skip.steps == learn.steps - skip.unchanged
    for i, s in enumerate(still):
        assert np.array_equal(skip.mask(i), learn.mask(i) & ~s)
    few = range(3)  # three episodes hold pauses at the start and after sub-goals
    kept, every = _sequences(skip.subset(few), env), _sequences(learn.subset(few), env)
    assert (kept.action[kept.mask] != DONE).all()  # no pause is learned ...
    assert (kept.action[~kept.mask] == DONE).any()  # ... but the LSTM still reads them
    assert (every.action[every.mask] == DONE).any()  # learn: pauses are learned like moves


def test_the_setting_reaches_the_loader_from_every_demo_config():
    for cfg in (R2D3Config(demos=(HUMAN,)), BCConfig(demos=(HUMAN,))):
        assert DemoFiles.of(cfg).unchanged == "skip-loops"
        cfg.demo_unchanged_steps = "learn"
        assert DemoFiles.of(cfg).unchanged == "learn"


def test_bad_values_are_one_line_naming_the_flag():
    cfg = R2D3Config(demos=(HUMAN,), demo_unchanged_steps="wait")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"--demo-unchanged-steps: expected one of \['skip', "):
        cfg.validate()
    with pytest.raises(ValueError, match="--demo-unchanged-steps: expected one of"):
        load_demos([HUMAN], DOORKEY, make_env(DOORKEY), unchanged="wait")


def _cli(*argv: str) -> subprocess.CompletedProcess:
    code = "from demostudio.cli import main; raise SystemExit(main())"
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip


def test_the_flag_is_in_help_and_refuses_other_values(tmp_path):
    shown = _cli("train", "r2d3", "--help")
    assert shown.returncode == 0
    assert "--demo-unchanged-steps {skip,skip-loops,learn}" in " ".join(shown.stdout.split())
    bad = _cli("train", "r2d3", "--demos", str(HUMAN), "--demo-unchanged-steps", "wait",
               "--run-dir", str(tmp_path / "run"))  # fmt: skip
    assert bad.returncode == 2
    lines = [line for line in bad.stderr.splitlines() if line.strip()]
    assert "--demo-unchanged-steps" in lines[-1] and "invalid choice" in lines[-1]
    assert "Traceback" not in bad.stderr and not (tmp_path / "run").exists()


def _walk(states: list[int], rewards: dict[int, float] | None = None):
    """A DoorKey episode whose observation ``t`` is the direction ``states[t]``."""
    e = _episodes(HUMAN)[0]
    n = len(states) - 1
    obs = {k: np.repeat(np.asarray(v)[:1], n + 1, axis=0) for k, v in e.observations.items()}
    obs["direction"] = np.asarray(states, dtype=np.asarray(e.observations["direction"]).dtype)
    paid = np.zeros(n, np.float32)
    for t, r in (rewards or {}).items():
        paid[t] = r
    none = np.zeros(n, bool)
    return dataclasses.replace(
        e, observations=obs, actions=np.zeros(n, np.int64), rewards=paid,
        terminations=none, truncations=none,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("states", "rewards", "expected"),
    [
        ([0, 1, 0, 2], None, [1, 1, 0]),  # a turn turned back
        ([0, 0, 1, 2], None, [1, 0, 0]),  # a pause: the one-step round trip
        ([0, 1, 2, 3], None, [0, 0, 0]),  # progress only
        ([0, 1, 0, 1, 2], None, [1, 1, 1, 0]),  # trips that overlap make one stretch
        ([0, 1, 2, 1, 0, 3], None, [1, 1, 1, 1, 0]),  # the longest trip from 0 covers 1's
        ([0, 1, 0, 2], {1: 1.0}, [0, 0, 0]),  # a reward on the way: it got somewhere
    ],
)
def test_round_trips_are_the_stretches_back_to_an_observation(states, rewards, expected):
    assert round_trip_steps(_walk(states, rewards)).tolist() == [bool(x) for x in expected]


def test_skip_loops_leaves_out_round_trips_and_only_where_there_are_some():
    env = make_env(DOORKEY)
    human = load_demos([HUMAN], DOORKEY, env)  # the default
    skip = load_demos([HUMAN], DOORKEY, env, unchanged="skip")
    learn = load_demos([HUMAN], DOORKEY, env, unchanged="learn")
    assert human.unchanged > skip.unchanged > 0  # the round trips hold every pause and more
    for i, e in enumerate(human.episodes):
        trips = round_trip_steps(e)
        assert (trips | ~unchanged_steps(e)).all()
        assert np.array_equal(human.mask(i), learn.mask(i) & ~trips)
    for env_id, folder in ((DOORKEY, EXPERT), ("MountainCar-v0", SAMPLE_DEMOS / "MountainCar-v0")):
        same = load_demos([folder], env_id, make_env(env_id), unchanged="skip-loops")
        assert same.unchanged == 0  # a planner never returns; continuous states never repeat

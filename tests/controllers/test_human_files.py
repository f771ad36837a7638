"""``demostudio record ENV --style human``: the files go through the window's recording path
(key map, keys held per step, fps, turn-based or not) and are valid episodes that verify by
re-simulation; ``quality`` and ``ls`` treat them as they treat a person's; bad knobs are one
line naming the flag."""

from __future__ import annotations

import json
import re
from datetime import datetime

import numpy as np
import pytest

from demostudio.cli import main
from demostudio.cli.record_cmd import HUMAN_KNOBS, RecordConfig, record
from demostudio.controllers.human import REAL_TIME_DEFAULT, TURN_BASED_DEFAULT
from demostudio.episode import load_episode, read_summary, validate
from demostudio.episode.quality import assess
from demostudio.episode.verify import verify_episode

GRIDS = ["MiniGrid-KeyCorridorS3R3-v0", "MiniGrid-ObstructedMaze-1Dlh-v0"]


def _record(tmp_path, env: str, episodes: int = 1, frames: bool = False, **kw):
    cfg = RecordConfig(
        env=env, style="human", episodes=episodes, seed=3, out=tmp_path, frames=frames, **kw
    )
    return record(cfg, progress=False)


def _keys_give_the_actions(path) -> None:
    data = load_episode(path)
    key_map = data.summary.attrs["key_map"]
    for keys, action in zip(data.keys, data.actions.tolist()):
        assert key_map["+".join(keys)] == action  # the key map's action for the keys held


@pytest.mark.parametrize("env", ["MountainCar-v0", "MiniGrid-DoorKey-8x8-v0"])
def test_files_with_frames_validate_and_verify(tmp_path, env):
    (path,) = _record(tmp_path, env, frames=True)
    assert validate(path) == []
    result = verify_episode(path)
    assert result.ok, result.describe()
    s = read_summary(path)
    assert s.terminated and s.length > 0
    _keys_give_the_actions(path)


@pytest.mark.parametrize("env", GRIDS)
def test_new_grid_tasks_play_human_style_and_verify(tmp_path, env):
    paths = _record(tmp_path, env, episodes=3)
    for path in paths:
        assert validate(path) == []
        assert verify_episode(path, frames=False).ok
        assert read_summary(path).total_return > 0  # solved, slips and all
        _keys_give_the_actions(path)


def test_real_time_file_is_recorded_as_a_person_would_be(tmp_path):
    (path,) = _record(tmp_path, "MountainCar-v0")
    data = load_episode(path)
    a = data.summary.attrs
    assert data.summary.controller == "keyboard" and data.summary.player == "scripted-human"
    assert a["fps"] == 30 and a["turn_based"] is False
    assert a["key_map_source"] == "MountainCar-v0 get_keys_to_action()"
    assert a["human_style"] == {"expert": "policy:scripted-mountaincar", **vars(REAL_TIME_DEFAULT)}
    assert data.keys[0] == []  # idle at the start: no key held
    assert {tuple(k) for k in data.keys} <= {(), ("left",), ("right",)}
    steps = np.diff(data.timestamps)
    assert np.all(steps > 0) and abs(np.median(steps) - 1 / 30) < 0.002  # the game's fps
    started = datetime.fromisoformat(a["recorded_at"]).timestamp()
    assert abs(data.timestamps[0] - started) < 60  # the clock starts at the recording's time


def test_turn_based_file_has_a_press_per_step_at_a_persons_pace(tmp_path):
    (path,) = _record(tmp_path, "MiniGrid-DoorKey-8x8-v0", player="ann")
    data = load_episode(path)
    a = data.summary.attrs
    assert data.summary.player == "ann" and a["fps"] is None and a["turn_based"] is True
    assert a["human_style"]["expert"] == "policy:scripted-doorkey"
    assert {k: a["human_style"][k] for k in HUMAN_KNOBS} == vars(TURN_BASED_DEFAULT)
    assert all(len(k) == 1 for k in data.keys)  # one key pressed for each step
    assert np.median(np.diff(data.timestamps)) > 0.15  # a person's pace, not the CPU's


def test_the_same_seed_plays_the_same_episodes(tmp_path):
    first = _record(tmp_path / "a", "MiniGrid-DoorKey-8x8-v0", episodes=2)
    again = _record(tmp_path / "b", "MiniGrid-DoorKey-8x8-v0", episodes=2)
    for x, y in zip(first, again):
        assert np.array_equal(load_episode(x).actions, load_episode(y).actions)
    expert = record(
        RecordConfig(
            env="MiniGrid-DoorKey-8x8-v0", episodes=2, seed=3, out=tmp_path / "c", frames=False
        ),
        progress=False,
    )
    human = sum(len(load_episode(p).actions) for p in first)
    assert human > sum(len(load_episode(p).actions) for p in expert)  # the slips cost steps


def test_quality_flags_the_idle_start_as_a_persons(tmp_path, capsys):
    """quality counts a keyboard file's idle steps by its keys (none held, nothing gained);
    a scripted person's long wait before the first key is flagged exactly as a person's."""
    paths = _record(tmp_path, "MountainCar-v0", episodes=2, idle_start=40)
    for q in assess(tmp_path):
        data = load_episode(q.path)
        waited = next(i for i, k in enumerate(data.keys) if k)
        assert q.idle_start == waited >= 20
        assert "idle-start" in [f.kind for f in q.flags]
        assert q.human_share == 1.0  # like a person's keyboard file
    assert main(["ls", str(paths[0].parent)]) == 0
    out = capsys.readouterr().out
    assert out.count("scripted-human") == 2 and out.count("keyboard") == 2


@pytest.mark.parametrize(
    ("argv", "flag", "expected"),
    [
        (["--reaction-delay", "3"], "--reaction-delay", "expected --style human"),
        (["--style", "human", "--policy", "random"], "--style human", "--policy scripted"),
        (["--style", "human", "--detour-rate", "1.5"], "--detour-rate", "from 0 to 1"),
        (["--style", "human", "--idle-start", "-2"], "--idle-start", ">= 0"),
        (["--style", "human", "--reaction-delay", "-1"], "--reaction-delay", ">= 0"),
        (
            ["--style", "human", "--detour-rate", "0.6", "--random-rate", "0.6"],
            "--random-rate",
            "detour_rate + random_rate <= 1",
        ),
    ],
)
def test_bad_knobs_are_one_line_naming_the_flag(tmp_path, capsys, argv, flag, expected):
    code = main(["record", "MountainCar-v0", "--out", str(tmp_path), *argv])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert err[0].startswith(f"demostudio: error: {flag}") and expected in err[0]
    assert not any(tmp_path.iterdir())


def test_help_states_each_knobs_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["record", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for knob in HUMAN_KNOBS:
        flag = "--" + knob.replace("_", "-")
        found = re.search(re.escape(flag) + r" \w+ (.*?)(?= --|$)", text)
        assert found, flag
        real, turn = getattr(REAL_TIME_DEFAULT, knob), getattr(TURN_BASED_DEFAULT, knob)
        assert f"default {real:g} real-time" in found.group(1), flag
        if knob != "reaction_delay":
            assert f"{turn:g} turn-based" in found.group(1), flag


def test_human_style_attrs_are_json(tmp_path):
    (path,) = _record(tmp_path, "MiniGrid-ObstructedMaze-1Dlh-v0")
    style = read_summary(path).attrs["human_style"]
    assert json.loads(json.dumps(style)) == style and style["expert"].startswith("policy:")

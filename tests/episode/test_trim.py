"""``demostudio trim``: a range of an episode as a new episode that still verifies by
re-simulation (its prefix actions replayed first), with idle ends cut on request."""

from __future__ import annotations

import json
import math
import warnings

import h5py
import numpy as np
import pytest

from demostudio.cli import main
from demostudio.episode import (
    EpisodeError,
    load_episode,
    open_episode,
    read_summary,
    validate,
    verify_episode,
)
from demostudio.episode.trim import idle_runs, trim_episode
from tests.replay.helpers import add_takeovers


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """Two scripted MountainCar episodes with frames (600x400)."""
    from demostudio.cli.record_cmd import RecordConfig, record

    root = tmp_path_factory.mktemp("trim")
    cfg = RecordConfig(env="MountainCar-v0", episodes=2, out=root, seed=7)
    return sorted(record(cfg, progress=False))


@pytest.fixture
def episode(recorded, tmp_path):
    target = tmp_path / "src.h5"
    target.write_bytes(recorded[0].read_bytes())
    return target


def _set(path, **attrs):
    with h5py.File(path, "r+") as f:
        for key, value in attrs.items():
            f.attrs[key] = json.dumps(value)


def test_a_trimmed_range_verifies_and_names_its_source(episode):
    src = load_episode(episode, frames=True)
    r = trim_episode(episode, start=20, end=60)
    assert r.path == episode.with_name("src_trim20-60.h5") and r.length == 40
    assert validate(r.path) == []
    result = verify_episode(r.path, frames=True)
    assert result.ok and result.steps_checked == 40, result.describe()
    new = load_episode(r.path, frames=True)
    np.testing.assert_array_equal(new.frames, src.frames[20:61])
    np.testing.assert_array_equal(new.observations, src.observations[20:61])
    np.testing.assert_array_equal(new.actions, src.actions[20:60])
    s = new.summary
    assert s.length == 40 and s.total_return == pytest.approx(src.rewards[20:60].sum())
    assert s.truncated and not s.terminated  # cut short before the env's end
    assert s.seed == src.summary.seed
    assert s.attrs["trim"] == {"source": "src.h5", "start": 20, "end": 60}
    assert s.notes.startswith("trimmed from src.h5, frames 20..60")
    with open_episode(r.path) as ep:
        assert ep.h5["trim_prefix/actions"].shape == (20,)


def test_trimming_a_trimmed_file_keeps_the_first_source(episode):
    first = trim_episode(episode, start=10, end=-1)
    second = trim_episode(first.path, start=5, end=30)
    with open_episode(second.path) as ep:
        assert ep.summary.attrs["trim"] == {"source": "src.h5", "start": 15, "end": 40}
        assert ep.h5["trim_prefix/actions"].shape == (15,)
    assert verify_episode(second.path).ok


def test_the_end_of_the_episode_stays_terminated(episode):
    n = load_episode(episode).summary.length
    r = trim_episode(episode, start=n - 30)
    s = load_episode(r.path).summary
    assert s.length == 30 and s.terminated and not s.truncated
    assert verify_episode(r.path).ok


def test_a_tampered_prefix_is_caught_by_verify(episode):
    r = trim_episode(episode, start=40, end=80)
    with h5py.File(r.path, "r+") as f:
        f["trim_prefix/actions"][:] = 1 - f["trim_prefix/actions"][()].clip(0, 1)
    result = verify_episode(r.path)
    assert not result.ok and result.divergence.step == -1  # the first observation differs


def test_keyboard_idle_ends_are_cut(episode):
    n = load_episode(episode).summary.length
    keys = ['["left"]'] * n
    keys[:15] = ["[]"] * 15
    keys[n - 31 : n - 20] = ["[]"] * 11
    with h5py.File(episode, "r+") as f:
        f["keys"][:] = np.array(keys, dtype=object)
    _set(episode, controller="keyboard")
    with open_episode(episode) as ep:
        assert idle_runs(ep) == (15, 0)  # the last step terminates: it is never idle
        assert idle_runs(ep, 0, n - 20) == (15, 11)
    r = trim_episode(episode, end=n - 20, idle=True)
    assert (r.start, r.end, r.idle_cut) == (15, n - 31, (15, 11))
    assert verify_episode(r.path).ok


def test_noop_action_is_idle_where_the_env_names_it(episode):
    actions = load_episode(episode).actions
    lead = int(np.argmax(actions != actions[0]))
    meanings = ["A", "B", "C"]
    meanings[int(actions[0])] = "NOOP"
    _set(episode, action_meanings=meanings)
    with open_episode(episode) as ep:
        assert idle_runs(ep)[0] == lead > 0


def test_a_held_action_is_idle_only_without_reward(episode):
    actions = load_episode(episode).actions
    held = int(np.argmax(actions != actions[0]))
    with open_episode(episode) as ep:
        assert idle_runs(ep) == (0, 0)  # MountainCar's -1 a step: holding a push is play
    with h5py.File(episode, "r+") as f:
        f["rewards"][:5] = 0.0
    with open_episode(episode) as ep:
        assert idle_runs(ep)[0] == min(5, held)


def test_who_acted_is_kept(episode):
    add_takeovers(episode, [(30, 50)])
    with open_episode(episode) as ep:
        actors = ep.h5["actors"][()]
    r = trim_episode(episode, start=25, end=55)
    with open_episode(r.path) as ep:
        np.testing.assert_array_equal(ep.h5["actors"][()], actors[25:55])
        assert ep.summary.attrs["actor_names"] == ["policy:scripted", "person:ann"]
    assert verify_episode(r.path).ok


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"start": 30, "end": 30}, "end"),
        ({"start": 5, "end": 100000}, "end"),
        ({"start": -9999}, "start"),
    ],
)
def test_bad_ranges_name_the_field(episode, kwargs, field):
    with pytest.raises(EpisodeError) as info:
        trim_episode(episode, **kwargs)
    assert info.value.field == field
    assert not list(episode.parent.glob("*trim*"))


def test_cli_writes_and_refuses_to_overwrite(episode, tmp_path, capsys):
    out = tmp_path / "piece.h5"
    assert main(["trim", str(episode), "--start", "3", "--end", "50", "--out", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out and verify_episode(out).ok
    assert main(["trim", str(episode), "--start", "3", "--end", "50", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("demostudio: error: ") and "already exists" in err
    assert "Traceback" not in err
    assert main(["trim", str(tmp_path / "missing.h5")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["trim", str(tmp_path)]) == 2
    assert "expected an episode file, got a folder" in capsys.readouterr().err


def test_a_trimmed_file_without_its_prefix_is_one_clean_error(episode, capsys):
    r = trim_episode(episode, start=10, end=40)
    with h5py.File(r.path, "r+") as f:
        del f["trim_prefix"]
    assert main(["verify", str(r.path)]) == 2
    err = capsys.readouterr().err
    assert "[trim_prefix/actions]" in err and "missing" in err and "Traceback" not in err


def test_rewards_whose_sum_overflows_trim_without_a_warning(episode, tmp_path, capsys):
    """Every reward 1e308 (finite): trim printed numpy's overflow warning. The piece's
    total_return is its rewards summed as the writer sums them: inf past float64."""
    with h5py.File(episode, "r+") as f:
        f["rewards"][:] = 1e308
    _set(episode, total_return="inf")
    before = episode.read_bytes()
    whole, one = tmp_path / "whole.h5", tmp_path / "one.h5"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["trim", str(episode), "--start", "3", "--end", "50", "--out", str(whole)]) == 0
        assert main(["trim", str(episode), "--start", "3", "--end", "4", "--out", str(one)]) == 0
        assert capsys.readouterr().err == ""
        assert read_summary(whole).total_return == math.inf and validate(whole) == []
        assert read_summary(one).total_return == 1e308 and validate(one) == []
    assert episode.read_bytes() == before

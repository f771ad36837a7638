"""Who acted (schema version 2): per-step actors, take-overs, version-1 files, bad actors."""

from __future__ import annotations

import json
from pathlib import Path

import h5py
import numpy as np
import pytest

from demostudio.cli import main
from demostudio.controllers import scripted_controller
from demostudio.episode import (
    SCHEMA_VERSION,
    EpisodeError,
    RecordEpisodes,
    load_episode,
    make_env,
    open_episode,
    person_mask,
    read_summary,
    scan,
    validate,
    verify_episode,
)
from demostudio.episode import actors as actors_module

AGENT = "policy:r2d3"
ANN = "person:ann"
# (first step, actor) of each stretch: the agent, Ann takes over twice, Bo once.
STRETCHES = [(0, None), (20, ANN), (35, None), (50, ANN), (60, AGENT), (70, "person:bo")]


@pytest.fixture(scope="module")
def taken_over(tmp_path_factory) -> tuple[Path, np.ndarray]:
    """A MountainCar episode with three take-overs; returns its path and the expected mask."""
    folder = tmp_path_factory.mktemp("takeovers")
    rec = RecordEpisodes(
        make_env("MountainCar-v0", render_mode="rgb_array"), folder, controller=AGENT
    )
    ctrl = scripted_controller("MountainCar-v0")
    obs, _ = rec.reset(seed=3)
    starts = dict(STRETCHES)
    expected = []
    for t in range(80):
        if t in starts:
            rec.set_actor(starts[t])
        expected.append(rec.actor.startswith("person:"))
        obs, *_ = rec.step(ctrl.act(rec, obs))
    rec.close()
    return rec.saved[0], np.array(expected)


def test_round_trip_with_several_takeovers(taken_over):
    path, expected = taken_over
    data = load_episode(path)
    assert data.summary.attrs["schema_version"] == SCHEMA_VERSION == 2
    assert data.actors.dtype == np.uint8 and data.actors.shape == (80,)
    assert data.actor_names == [AGENT, ANN, "person:bo"]
    named = [data.actor_names[i] for i in data.actors]
    assert named[:20] == [AGENT] * 20 and named[20:35] == [ANN] * 15
    assert named[50:60] == [ANN] * 10 and named[70:] == ["person:bo"] * 10
    mask = person_mask(data.actors, data.actor_names)
    np.testing.assert_array_equal(mask, expected)
    s = read_summary(path)
    assert s.human_share == pytest.approx(35 / 80)
    assert s.takeovers == 3
    assert validate(path) == [] and verify_episode(path).ok


@pytest.mark.parametrize("piece", [1, 7, 20, 21])
def test_summary_reads_actors_in_pieces(taken_over, monkeypatch, piece):
    """The summary reads ``actors`` a bounded piece at a time; take-overs across pieces count."""
    monkeypatch.setattr(actors_module, "_PIECE", piece)
    s = read_summary(taken_over[0])
    assert s.human_share == pytest.approx(35 / 80) and s.takeovers == 3


def test_actor_carries_into_the_next_episode_and_none_returns_to_the_controller(tmp_path):
    rec = RecordEpisodes(
        make_env("MountainCar-v0", render_mode="rgb_array"), tmp_path, controller=AGENT
    )
    rec.reset(seed=1)
    rec.set_actor(ANN)
    rec.step(0)
    rec.reset(seed=2)  # Ann still holds the controls
    rec.step(1)
    rec.set_actor(None)
    rec.step(2)
    rec.close()
    first, second = (load_episode(p) for p in rec.saved)
    assert [first.actor_names[i] for i in first.actors] == [ANN]
    assert [second.actor_names[i] for i in second.actors] == [ANN, AGENT]
    assert second.summary.human_share == 0.5 and second.summary.takeovers == 0


def _as_version_1(src: Path, dst: Path, **attrs) -> Path:
    """A copy of ``src`` as version 1 wrote it: no actors, no actor_names."""
    dst.write_bytes(src.read_bytes())
    with h5py.File(dst, "r+") as f:
        del f["actors"]
        del f.attrs["actor_names"]
        f.attrs["schema_version"] = json.dumps(1)
        for key, value in attrs.items():
            f.attrs[key] = json.dumps(value)
    return dst


@pytest.mark.parametrize(
    ("controller", "actor", "share"),
    [("policy:scripted", "policy:scripted", 0.0), ("keyboard", "person:cy", 1.0)],
)
def test_version_1_file_reads_as_all_controller(
    tmp_path, taken_over, controller, actor, share, capsys
):
    path = _as_version_1(taken_over[0], tmp_path / "v1.h5", controller=controller, player="cy")
    data = load_episode(path)
    assert data.actor_names == [actor]
    np.testing.assert_array_equal(data.actors, np.zeros(80, np.uint8))
    assert data.summary.human_share == share and data.summary.takeovers == 0
    assert validate(path) == [] and verify_episode(path).ok
    assert main(["validate", str(path)]) == 0
    assert main(["verify", "-q", str(path)]) == 0


def test_ls_and_info_show_the_human_share_and_takeovers(taken_over, capsys):
    path, _ = taken_over
    assert main(["ls", str(path)]) == 0
    out = capsys.readouterr().out
    header, _, row = out.splitlines()[:3]
    assert "human" in header and "takeovers" in header
    cells = row.split()
    assert "44%" in cells and "3" in cells
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "44% of steps by a person, 3 takeover(s)" in out
    assert "policy:r2d3, person:ann, person:bo" in out


def _out_of_range(f: h5py.File) -> None:
    f["actors"][41] = 3  # three names: 0..2


def _wrong_length(f: h5py.File) -> None:
    f["actors"].resize(79, axis=0)


def _wrong_type(f: h5py.File) -> None:
    data = f["actors"][()]
    del f["actors"]
    f["actors"] = data.astype(np.float32)


def _names_not_a_list(f: h5py.File) -> None:
    f.attrs["actor_names"] = json.dumps({"0": AGENT})


def _names_missing(f: h5py.File) -> None:
    del f.attrs["actor_names"]


@pytest.mark.parametrize(
    ("damage", "field", "words"),
    [
        (_out_of_range, "actors", "expected indices below 3 (the actor_names), got 3 at step 41"),
        (_wrong_length, "actors", "expected (80,) uint8 (T = 80), got (79,)"),
        (_wrong_type, "actors", "float32"),
        (_names_not_a_list, "actor_names", "expected a list of text"),
        (_names_missing, "actor_names", "expected this attribute"),
    ],
)
def test_malformed_actors_are_one_clean_error(tmp_path, taken_over, damage, field, words, capsys):
    bad = tmp_path / "bad.h5"
    bad.write_bytes(taken_over[0].read_bytes())
    with h5py.File(bad, "r+") as f:
        damage(f)
    problems = validate(bad)
    assert len(problems) == 1 and f"[{field}]" in problems[0] and words in problems[0]
    with pytest.raises(EpisodeError) as err:
        open_episode(bad)
    assert err.value.field == field
    assert main(["validate", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "INVALID" in out and words in out and "Traceback" not in out
    # The folder still lists, the bad file flagged.
    (entry,) = scan(tmp_path)
    assert entry.summary is None and field in entry.error

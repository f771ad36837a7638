"""``demostudio quality``: per-episode facts, outliers and duplicates within a folder, idle
ends, verification, and a ready-to-run command for each flag."""

from __future__ import annotations

import json
import shlex
import shutil

import h5py
import numpy as np
import pytest

from demostudio.cli import main
from demostudio.episode import read_summary
from demostudio.episode.quality import assess, episode_quality, robust_z
from tests.replay.helpers import add_takeovers


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, record_demos):
    return record_demos(tmp_path_factory.mktemp("quality"), "MountainCar-v0", 6, seed=11)


@pytest.fixture
def folder(recorded, tmp_path):
    target = tmp_path / "demos"
    shutil.copytree(recorded, target)
    return target


def _by_name(items):
    return {q.path.name: q for q in items}


def test_robust_z_flags_the_odd_one_and_not_small_differences():
    z = robust_z(np.array([-120, -118, -125, -119, -122, -400.0]))
    assert abs(z[-1]) > 3.5 and np.all(np.abs(z[:-1]) < 3.5)
    # A tiny spread makes a few steps look huge; they are not a material gap.
    assert np.all(robust_z(np.array([-122, -124, -122, -122, -114, -122.0])) == 0)
    # Nearly all equal (MAD 0): the mean absolute deviation stands in.
    z = robust_z(np.array([500, 500, 500, 500, 500, 21.0]))
    assert z[-1] < -3.5 and np.all(z[:-1] == 0)


def test_a_clean_folder_has_facts_and_no_flags(folder):
    items = assess(folder)
    assert len(items) == 6
    for q in items:
        s = read_summary(q.path)
        assert (q.length, q.total_return, q.env_id) == (s.length, s.total_return, s.env_id)
        assert q.flags == () and q.error is None and q.verified is None
        assert sum(q.actions.values()) == q.length and set(q.actions) == {"0", "1", "2"}
        assert q.human_share == 0.0 and q.takeovers == 0  # a scripted policy played


def test_duplicates_outliers_and_unreadable_files_are_flagged(folder):
    files = sorted(folder.glob("*.h5"))
    shutil.copy2(files[0], folder / "zz-copy.h5")
    with h5py.File(files[1], "r+") as f:
        f.attrs["total_return"] = json.dumps(-900.0)
    (folder / "broken.h5").write_bytes(b"not hdf5")
    items = _by_name(assess(folder))
    dup = items["zz-copy.h5"].flags
    assert [f.kind for f in dup] == ["duplicate"] and files[0].name in dup[0].detail
    assert dup[0].command == f"demostudio tag {shlex.quote(str(folder / 'zz-copy.h5'))} --add bad"
    assert [f.kind for f in items[files[1].name].flags] == ["return-low"]
    assert items["broken.h5"].flags[0].kind == "unreadable"
    assert items[files[0].name].flags == ()  # the first copy is the original


def test_idle_start_is_flagged_with_a_trim_command_that_fixes_it(folder, capsys):
    path = sorted(folder.glob("*.h5"))[2]
    n = read_summary(path).length
    with h5py.File(path, "r+") as f:
        f["keys"][:] = np.array(["[]"] * 20 + ['["right"]'] * (n - 20), dtype=object)
        f.attrs["controller"] = json.dumps("keyboard")
        del f["actors"], f.attrs["actor_names"]  # as a version-1 keyboard file
        f.attrs["schema_version"] = json.dumps(1)
    q = _by_name(assess(folder))[path.name]
    assert (q.idle_start, q.idle_end) == (20, 0)
    assert q.human_share == 1.0  # a keyboard file without actors: the player took every step
    (flag,) = q.flags
    assert flag.kind == "idle-start" and flag.command.startswith("demostudio trim ")
    assert main(shlex.split(flag.command)[1:]) == 0
    trimmed = path.with_name(f"{path.stem}_trim20-{n}.h5")
    assert read_summary(trimmed).length == n - 20
    # the trimmed piece is not an outlier of the folder (pieces stay out of the statistics)
    assert _by_name(assess(folder))[trimmed.name].flags == ()


def test_who_acted_from_the_actors_dataset(folder):
    path = sorted(folder.glob("*.h5"))[3]
    add_takeovers(path, [(10, 30), (50, 60)])
    q = episode_quality(path)
    assert q.takeovers == 2
    assert q.human_share == pytest.approx(30 / read_summary(path).length)


def test_bad_actors_are_one_clean_error(folder):
    path = sorted(folder.glob("*.h5"))[4]
    add_takeovers(path, [(1, 3)], names=("policy:x",))  # index 1 with one name
    q = episode_quality(path)
    assert q.error is not None and "[actors]" in q.error and str(path) in q.error


def test_cli_table_json_and_verify(folder, capsys):
    files = sorted(folder.glob("*.h5"))
    with h5py.File(files[5], "r+") as f:
        f["rewards"][7] = 3.0
    assert main(["quality", str(folder), "--verify", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "1 of 6 episode(s) flagged" in out and "diverges" in out
    assert f"demostudio tag {files[5]} --add bad" in out
    assert main(["quality", str(folder), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["episodes"]) == 6
    first = data["episodes"][0]
    assert {"length", "return", "idle_start_share", "actions", "flags", "human_share"} <= set(first)
    assert main(["quality", str(folder / "nope")]) == 2
    assert "no such episode file or folder" in capsys.readouterr().err


def test_a_file_that_would_crash_quality_is_its_own_line_and_exit_1(folder, capsys):
    """A Discrete space of 10**12 actions made the histogram allocate 7 TiB (MemoryError,
    the whole folder report lost); rewards of shape (T, 2) were "unreadable" without a field."""
    files = sorted(folder.glob("*.h5"))
    huge, wide = folder / "huge.h5", folder / "wide.h5"
    shutil.copy(files[0], huge)
    shutil.copy(files[0], wide)
    with h5py.File(huge, "r+") as f:
        f.attrs["action_space"] = json.dumps({"type": "Discrete", "n": 10**12, "start": 0})
    with h5py.File(wide, "r+") as f:
        rewards = f["rewards"][()]
        del f["rewards"]
        f["rewards"] = np.c_[rewards, rewards]
    assert main(["quality", str(folder), "--no-progress"]) == 1
    out = capsys.readouterr().out
    assert f"{huge}: unreadable: {huge} [action_space]: expected a Discrete n" in out
    assert f"{wide}: unreadable: {wide} [rewards]: expected shape" in out
    assert all(str(p) in out for p in files)  # the good files are still assessed
    assert main(["quality", str(folder), "--json"]) == 1
    errors = [q["error"] for q in json.loads(capsys.readouterr().out)["episodes"] if q["error"]]
    assert len(errors) == 2


def test_an_episode_idle_nearly_throughout_is_tagged_bad_not_trimmed(folder):
    path = sorted(folder.glob("*.h5"))[2]
    n = read_summary(path).length
    with h5py.File(path, "r+") as f:  # a person who held nothing but on the last step
        f["keys"][:] = np.array(["[]"] * (n - 1) + ['["right"]'], dtype=object)
        f.attrs["controller"] = json.dumps("keyboard")
        del f["actors"], f.attrs["actor_names"]
        f.attrs["schema_version"] = json.dumps(1)
    (flag,) = _by_name(assess(folder))[path.name].flags
    assert flag.kind == "mostly-idle" and f"{n - 1} of {n} steps idle: 1 left" in flag.detail
    assert flag.command == f"demostudio tag {shlex.quote(str(path))} --add bad"


def test_an_episode_ended_with_end_is_no_return_outlier(folder):
    """End in the window saves the episode truncated before the env ended it: MountainCar's
    return is then far above the others (fewer -1 steps), which says when the person stopped,
    not that the file is suspect."""
    import gymnasium as gym

    from demostudio.episode import RecordEpisodes

    rec = RecordEpisodes(gym.make("MountainCar-v0"), folder, controller="policy:script",
                         record_frames=False)  # fmt: skip
    rec.reset(seed=3)
    for _ in range(12):
        rec.step(2)
    (path,) = [rec.end_episode(keep=True)]
    rec.close()
    items = _by_name(assess(folder))
    q = items[path.name]
    assert q.ended_early and read_summary(path).total_return == -12.0
    (flag,) = q.flags
    assert flag.kind == "ended-early" and "at step 12" in flag.detail
    assert flag.command == f"demostudio replay {shlex.quote(str(path))}"
    assert all(items[p.name].flags == () for p in folder.glob("*.h5") if p != path)
    assert not any(q.ended_early for name, q in items.items() if name != path.name)

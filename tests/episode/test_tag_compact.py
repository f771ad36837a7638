"""``tag`` takes its files before or after the tags; ``compact`` skips files already compact."""

from __future__ import annotations

import pytest

from demostudio.cli import main
from demostudio.episode import RecordEpisodes, make_env, open_episode, read_summary


@pytest.fixture
def episodes(tmp_path):
    rec = RecordEpisodes(make_env("MountainCar-v0", render_mode="rgb_array"), tmp_path / "ep")
    for seed in (1, 2):
        rec.reset(seed=seed)
        for t in range(30):
            rec.step(t % 3)
    rec.close()
    return rec.saved


def test_tag_files_before_or_after_the_tags(episodes, capsys):
    first, second = map(str, episodes)
    assert main(["tag", "--add", "bad", "odd", first]) == 0
    assert main(["tag", first, second, "--add", "good"]) == 0
    assert main(["tag", "--remove", "odd", first, "--notes", "kept"]) == 0
    assert read_summary(first).tags == ("bad", "good") and read_summary(first).notes == "kept"
    assert read_summary(second).tags == ("good",)
    assert main(["tag", "--add", "bad", str(episodes[0].parent) + "/"]) == 0  # a folder
    assert read_summary(second).tags == ("bad", "good")
    capsys.readouterr()
    assert main(["tag", "--add", "bad"]) != 0
    err = capsys.readouterr().err
    assert "expected episode files or folders to tag" in err and "Traceback" not in err


def test_compact_skips_files_already_compact(episodes, capsys):
    path = str(episodes[0])
    assert main(["compact", path]) == 0
    assert "->" in capsys.readouterr().out
    size, mtime = episodes[0].stat().st_size, episodes[0].stat().st_mtime_ns
    assert main(["compact", path]) == 0
    assert "already compact (level 9), skipped" in capsys.readouterr().out
    assert (episodes[0].stat().st_size, episodes[0].stat().st_mtime_ns) == (size, mtime)
    assert main(["compact", "--level", "6", path]) == 0  # lower than it is: nothing to gain
    assert "skipped" in capsys.readouterr().out
    with open_episode(path) as ep:
        assert ep.h5["frames"].compression_opts == 9


@pytest.mark.parametrize("command", ["compact", "tag"])
def test_frames_without_pixels_and_2d_rewards_are_refused_before_writing(episodes, command, capsys):
    """Frames (T+1, 0, 0, 3) passed validate and made compact fail inside h5py ("All chunk
    dimensions must be positive"); rewards (T, 2) were tagged and compacted as if fine."""
    import h5py
    import numpy as np

    no_pixels, wide = episodes
    with h5py.File(no_pixels, "r+") as f:
        n = f["frames"].shape[0]
        del f["frames"]
        f["frames"] = np.zeros((n, 0, 0, 3), np.uint8)
    with h5py.File(wide, "r+") as f:
        rewards = f["rewards"][()]
        del f["rewards"]
        f["rewards"] = np.c_[rewards, rewards]
    for path, field in ((no_pixels, "frames"), (wide, "rewards")):
        before = path.read_bytes()
        argv = [command, str(path)] + (["--add", "good"] if command == "tag" else [])
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"demostudio: error: {path} [{field}]: expected ")
        assert len(err.splitlines()) == 1 and path.read_bytes() == before


def test_compact_refuses_a_gzip_bomb_frame_and_leaves_the_file(episodes, capsys):
    """A frame chunk inflating to 64 MB (for a 720 KB frame) was inflated whole and the file
    rewritten with it; compact now reads frames through the reader's bounded inflate."""
    import zlib

    import h5py

    path = episodes[0]
    with h5py.File(path, "r+") as f:
        zeros = (0,) * (f["frames"].ndim - 1)
        f["frames"].id.write_direct_chunk((0, *zeros), zlib.compress(bytes(64 << 20), 9))
    before = path.read_bytes()
    assert main(["compact", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"demostudio: error: {path} [frames]: expected readable data")
    assert "row 0" in err and len(err.splitlines()) == 1
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == sorted(p.name for p in episodes)


def _contiguous(f):
    frames = f["frames"][()]
    del f["frames"]
    f.create_dataset("frames", data=frames)  # not chunked, not deflated


def _zero_length(f):
    for name in ("actions", "rewards", "terminations", "truncations", "keys", "actors"):
        if name in f:
            rows = f[name][:0]
            del f[name]
            f[name] = rows
    for name in ("observations", "timestamps", "frames"):
        rows = f[name][:1]
        del f[name]
        f[name] = rows
    f.attrs.update(length="0", total_return="0.0", flushed_steps="0")
    f.attrs.update(terminated="false", truncated="false")


@pytest.mark.parametrize("edit", [_contiguous, _zero_length], ids=["contiguous", "zero-length"])
def test_compact_rewrites_frames_that_are_not_chunked(episodes, edit, capsys):
    """Frames stored contiguous (a valid file; a zero-length episode written by h5py) made
    compact fail in read_direct_chunk with a traceback; they are compacted like any other."""
    import h5py
    import numpy as np

    from demostudio.episode import validate

    path = episodes[0]
    with h5py.File(path, "r+") as f:
        edit(f)
        pixels = f["frames"][()]
    assert validate(path) == []
    assert main(["compact", str(path)]) == 0
    assert "->" in capsys.readouterr().out
    assert validate(path) == []
    with h5py.File(path, "r") as f:
        frames = f["frames"]
        assert frames.chunks == (1, *pixels.shape[1:]) and frames.compression_opts == 9
        np.testing.assert_array_equal(frames[()], pixels)


@pytest.mark.parametrize("level", ["0", "99", "x"])
def test_compact_level_out_of_range_is_a_usage_error(episodes, level, capsys):
    before = episodes[0].read_bytes()
    with pytest.raises(SystemExit) as exit_:
        main(["compact", str(episodes[0]), "--level", level])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --level: expected a deflate level from 1 to 9, got '{level}'" in err
    assert "Traceback" not in err and episodes[0].read_bytes() == before


@pytest.mark.parametrize("argv", [["compact"], ["tag", "--add", "x"]], ids=["compact", "tag"])
def test_tag_and_compact_that_find_no_episodes_say_so(tmp_path, argv, capsys):
    """Like validate and verify: a folder holding no episode (even one named x.h5) is not
    silently done."""
    empty = tmp_path / "x.h5"
    empty.mkdir()
    assert main([*argv, str(empty)]) == 1
    assert capsys.readouterr().err.strip() == f"no episodes under {empty}"
    assert list(empty.iterdir()) == []

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

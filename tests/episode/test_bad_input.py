"""Bad files: each gives an error naming the file and the field, and the rest of the folder
still lists, validates and loads."""

from __future__ import annotations

import json
import os
import shutil
import warnings
from pathlib import Path

import h5py
import numpy as np
import pytest

from demostudio.cli import main
from demostudio.cli.record_cmd import RecordConfig, record
from demostudio.episode import (
    EpisodeError,
    SchemaVersionError,
    load_episode,
    open_episode,
    scan,
    validate,
    verify_episode,
)


@pytest.fixture(scope="module")
def good_episodes(tmp_path_factory) -> list[Path]:
    out = tmp_path_factory.mktemp("good")
    return record(RecordConfig(env="MountainCar-v0", episodes=2, out=out, seed=1), progress=False)


def _folder_with(tmp_path: Path, good: list[Path], make_bad) -> tuple[Path, Path]:
    for p in good:
        shutil.copy(p, tmp_path / p.name)
    bad = tmp_path / "zz-bad.h5"
    make_bad(bad, good[0])
    return tmp_path, bad


def _truncated(bad: Path, good: Path) -> None:
    data = good.read_bytes()
    bad.write_bytes(data[: len(data) // 2])


def _random_bytes(bad: Path, good: Path) -> None:
    bad.write_bytes(np.random.default_rng(0).bytes(10_000))


def _other_tool(bad: Path, good: Path) -> None:
    with h5py.File(bad, "w") as f:
        f.create_dataset("data", data=np.arange(10))
        f.attrs["creator"] = "some other tool"


def _newer_schema(bad: Path, good: Path) -> None:
    shutil.copy(good, bad)
    with h5py.File(bad, "r+") as f:
        f.attrs["schema_version"] = json.dumps(99)


def _missing_dataset(bad: Path, good: Path) -> None:
    shutil.copy(good, bad)
    with h5py.File(bad, "r+") as f:
        del f["rewards"]


def _disagreeing_lengths(bad: Path, good: Path) -> None:
    shutil.copy(good, bad)
    with h5py.File(bad, "r+") as f:
        f["terminations"].resize(3, axis=0)


def _unknown_env(bad: Path, good: Path) -> None:
    shutil.copy(good, bad)
    with h5py.File(bad, "r+") as f:
        f.attrs["env_id"] = json.dumps("NoSuchGame-v9")


CASES = {
    "truncated": (_truncated, None, "expected an HDF5 episode file"),
    "random bytes": (_random_bytes, None, "expected an HDF5 episode file"),
    "other tool": (_other_tool, "format", "expected a DemoStudio episode"),
    "newer schema": (_newer_schema, "schema_version", "schema version 99"),
    "missing dataset": (_missing_dataset, "rewards", "missing"),
    "disagreeing lengths": (_disagreeing_lengths, "terminations", "expected length"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_file_names_file_and_field_and_leaves_the_rest(tmp_path, good_episodes, case, capsys):
    make_bad, field, words = CASES[case]
    folder, bad = _folder_with(tmp_path, good_episodes, make_bad)
    before = {p: p.read_bytes() for p in good_episodes}

    with pytest.raises(EpisodeError) as err:
        load_episode(bad)
    assert str(bad) in str(err.value) and words in str(err.value)
    assert err.value.field == field
    if field:
        assert f"[{field}]" in str(err.value)

    problems = validate(bad)
    assert len(problems) == 1 and str(bad) in problems[0]

    # The rest of the folder is unaffected: it lists and loads.
    entries = scan(folder)
    assert len(entries) == 3
    assert [e.error is not None for e in entries] == [False, False, True]
    for e in entries[:2]:
        assert len(load_episode(e.path)) == e.summary.length > 0

    assert main(["validate", str(folder)]) == 1
    out = capsys.readouterr().out
    assert out.count("INVALID") == 1 and "2 valid, 1 invalid" in out
    assert main(["ls", str(folder)]) == 0
    assert "BAD FILE" in capsys.readouterr().out
    assert all(p.read_bytes() == data for p, data in before.items())


def test_newer_schema_is_its_own_error_type(tmp_path, good_episodes):
    bad = tmp_path / "new.h5"
    _newer_schema(bad, good_episodes[0])
    with pytest.raises(SchemaVersionError, match="upgrade demostudio"):
        open_episode(bad)


def test_unknown_env_id_is_named_on_verify(tmp_path, good_episodes, capsys):
    bad = tmp_path / "env.h5"
    _unknown_env(bad, good_episodes[0])
    assert validate(bad) == []  # the file itself is fine
    with pytest.raises(EpisodeError) as err:
        verify_episode(bad)
    assert err.value.field == "env_id" and "NoSuchGame-v9" in str(err.value)
    assert main(["verify", str(bad), "-q"]) == 2
    assert "NoSuchGame-v9" in capsys.readouterr().err


def test_missing_path_is_a_clear_error(tmp_path, capsys):
    with pytest.raises(EpisodeError, match="no such file"):
        open_episode(tmp_path / "nope.h5")
    assert main(["ls", str(tmp_path / "nope")]) == 2
    assert "nope: no such episode file or folder" in capsys.readouterr().err


def test_a_dangling_link_is_named_as_one(tmp_path, capsys):
    link = tmp_path / "gone.h5"
    link.symlink_to(tmp_path / "elsewhere.h5")
    assert main(["info", str(link)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"demostudio: error: {link}: expected an episode file, got a link to a missing "
        f"file ('{tmp_path / 'elsewhere.h5'}')"
    )


def test_info_on_a_folder_and_recover_of_a_missing_path(tmp_path, capsys):
    assert main(["info", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"demostudio: error: {tmp_path}: expected an episode file, got a folder"
    assert main(["recover", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert "nope: no such .partial file or folder" in err and "crashed" not in err


SPECIAL_FILES = {
    "a link to /dev/zero": (lambda p: p.symlink_to("/dev/zero"), "got a special file"),
    "a FIFO": (lambda p: os.mkfifo(p), "got a special file"),
    "a link to itself": (lambda p: p.symlink_to(p), "got a link loop"),
    "a link to nothing": (
        lambda p: p.symlink_to(p.with_name("gone.h5")),
        "got a link to a missing file",
    ),
}


@pytest.mark.parametrize("case", list(SPECIAL_FILES))
def test_special_files_are_named_as_such_by_every_command(tmp_path, good_episodes, case, capsys):
    """validate, ls, verify and quality said "no such episode file or folder" for these
    (info and trim already said "special file"); given alone or in a folder, each is now
    that file's one line and the good files beside it still list."""
    make, words = SPECIAL_FILES[case]
    folder, bad = _folder_with(tmp_path, good_episodes, lambda bad, good: make(bad))
    for argv in (["validate", str(bad)], ["quality", str(bad), "--no-progress"]):
        assert main(argv) == 1
        out = capsys.readouterr().out
        assert f"{bad}: expected an episode file, {words}" in out
    assert main(["verify", "-q", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"demostudio: error: {bad}: expected an episode file, {words}")
    assert len(err.splitlines()) == 1
    for target in (bad, folder):
        assert main(["ls", str(target)]) == 0
        rows = [r for r in capsys.readouterr().out.splitlines() if r.startswith(str(bad))]
        assert len(rows) == 1 and "BAD FILE" in rows[0] and words in rows[0]
    assert main(["validate", str(folder)]) == 1
    assert "2 valid, 1 invalid" in capsys.readouterr().out


def test_verify_names_env_kwargs_the_env_fails_with(tmp_path, good_episodes, capsys):
    """{"goal_velocity": "fast"} makes MountainCar fail inside its step: that was gymnasium's
    traceback; it is one line naming env_kwargs."""
    bad = tmp_path / "kwargs.h5"
    shutil.copy(good_episodes[0], bad)
    with h5py.File(bad, "r+") as f:
        f.attrs["env_kwargs"] = json.dumps({"goal_velocity": "fast"})
    assert main(["verify", "-q", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith(f"demostudio: error: {bad} [env_kwargs]: expected arguments the env")
    assert '{"goal_velocity": "fast"}' in err and "fails when it steps" in err


def test_verify_names_reset_options_the_env_fails_to_reset_with(tmp_path, good_episodes, capsys):
    """{"low": "x"} makes MountainCar's reset fail: verify blamed env_kwargs ({}); it names
    the reset_options the env was given."""
    bad = tmp_path / "options.h5"
    shutil.copy(good_episodes[0], bad)
    with h5py.File(bad, "r+") as f:
        f.attrs["reset_options"] = json.dumps({"low": "x"})
    before = bad.read_bytes()
    assert main(["verify", "-q", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith(
        f"demostudio: error: {bad} [reset_options]: expected options the env resets with, "
        'got {"low": "x"}: it fails when it resets (ValueError: '
    )
    assert bad.read_bytes() == before


def test_rewards_whose_sum_overflows_are_one_clean_line(tmp_path, good_episodes, capsys):
    """Every reward 1e308 (finite): validate printed numpy's overflow warning and its source
    line before the verdict. The sum is inf, as the writer's running total_return would be:
    one line when total_return disagrees, valid when it says inf."""
    bad = tmp_path / "huge.h5"
    shutil.copy(good_episodes[0], bad)
    with h5py.File(bad, "r+") as f:
        f["rewards"][:] = 1e308
        stored = json.loads(f.attrs["total_return"])
    before = bad.read_bytes()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["validate", str(bad)]) == 1
        out, err = capsys.readouterr()
        assert err == "" and out.count("\n") == 3  # the verdict, a blank line, the count
        assert out.startswith(
            f"INVALID {bad} [total_return]: expected the sum of rewards inf, got {stored:g}\n"
        )
        assert bad.read_bytes() == before
        with h5py.File(bad, "r+") as f:
            f.attrs["total_return"] = json.dumps("inf")  # as the writer spells it
        assert main(["validate", str(bad)]) == 0
    assert capsys.readouterr().err == ""


def test_verify_of_uint8_actions_matches_without_numpy_warnings(tmp_path, good_episodes):
    """uint8 actions reached MountainCar as np.uint8: ``action - 1`` wrapped around (an
    overflow warning and a false divergence). They are read in the space's int64."""
    path = tmp_path / "uint8.h5"
    shutil.copy(good_episodes[0], path)
    with h5py.File(path, "r+") as f:
        actions = f["actions"][()]
        del f["actions"]
        f["actions"] = actions.astype(np.uint8)
    assert load_episode(path).actions.dtype == np.int64
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert verify_episode(path, frames=False).ok


def test_a_nan_only_difference_is_described_without_a_warning():
    from demostudio.episode import describe_difference

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nanmax of an all-NaN difference warned
        assert describe_difference(np.array([np.nan, 1.0]), np.array([2.0, 1.0])) == (
            "leaf 0: 1 values NaN on one side only"
        )

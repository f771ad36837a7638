"""merge / split / filters: new folders, sources untouched."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from demostudio.episode import EpisodeError, read_summary, update_metadata
from demostudio.interop.folders import EpisodeFilter, merge, select, split, split_indices


def _fingerprint(folder: Path) -> dict[str, tuple[str, int]]:
    """Content hash and mtime of every file under ``folder``."""
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            digest = hashlib.sha256(p.read_bytes()).hexdigest()
            out[str(p.relative_to(folder))] = (digest, p.stat().st_mtime_ns)
    return out


@pytest.fixture
def library(demos, tmp_path) -> Path:
    """A copy of the session demos with tags: MountainCar scripted #0 'good', DoorKey #1
    'good' and 'bad'; the keyboard episode already has 'good' and 'infos'."""
    lib = tmp_path / "lib"
    shutil.copytree(demos["root"][0], lib)
    mc = sorted((lib / "MountainCar-v0").glob("*.h5"))
    dk = sorted((lib / "MiniGrid-DoorKey-5x5-v0").glob("*.h5"))
    update_metadata(mc[0], tags=["good"])
    update_metadata(dk[1], tags=["good", "bad"])
    return lib


def test_filters_select_by_tag_controller_player_env_and_return(library):
    def names(flt):
        return sorted(s.path.name for s in select([library], flt).episodes)

    every = select([library]).episodes
    assert len(every) == 5
    good = names(EpisodeFilter(tags=("good",)))
    assert len(good) == 3
    assert len(names(EpisodeFilter(tags=("good",), exclude_tags=("bad",)))) == 2
    assert len(names(EpisodeFilter(tags=("good", "infos")))) == 1
    assert len(names(EpisodeFilter(controller="policy:*"))) == 4
    assert len(names(EpisodeFilter(controller="keyboard"))) == 1
    assert len(names(EpisodeFilter(player="ada"))) == 1
    assert len(names(EpisodeFilter(env="MiniGrid-*"))) == 2
    # DoorKey returns are positive, MountainCar ones negative.
    assert names(EpisodeFilter(min_return=0.0)) == names(EpisodeFilter(env="MiniGrid-*"))
    best = max(s.total_return for s in every)
    assert len(names(EpisodeFilter(min_return=best))) == 1
    assert "min_return=0.0" in EpisodeFilter(min_return=0.0).describe()


def test_merge_copies_filtered_episodes_and_leaves_sources_untouched(library, demos, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(library / "MiniGrid-DoorKey-5x5-v0", other / "MiniGrid-DoorKey-5x5-v0")
    before = {src: _fingerprint(src) for src in (library, other)}

    result = merge([library, other], tmp_path / "merged", EpisodeFilter(exclude_tags=("bad",)))

    assert {src: _fingerprint(src) for src in (library, other)} == before
    # The DoorKey episodes are in both sources byte for byte: copied once.
    assert result.duplicates == 1
    assert len(result.files) == 4 and result.selection.rejected == 2
    for p in result.files:
        assert p.exists() and p.parent.parent == tmp_path / "merged"
        source = library / p.parent.name / p.name
        assert p.read_bytes() == source.read_bytes()
    manifest = json.loads((tmp_path / "merged" / "manifest.json").read_text())
    assert manifest["operation"] == "merge"
    assert manifest["filter"]["exclude_tags"] == ["bad"]
    assert len(manifest["files"]) == 4
    assert not list(tmp_path.glob(".merged.tmp-*"))


def test_merge_renames_different_files_with_the_same_name(library, tmp_path):
    mc = sorted((library / "MountainCar-v0").glob("*.h5"))
    twin = tmp_path / "twin" / "MountainCar-v0"
    twin.mkdir(parents=True)
    shutil.copy2(mc[1], twin / mc[0].name)  # another episode under the same file name
    result = merge([mc[0], twin], tmp_path / "out")
    assert sorted(p.name for p in result.files) == sorted([mc[0].name, mc[0].stem + "-1.h5"])
    assert read_summary(result.files[0]).seed != read_summary(result.files[1]).seed


def test_merge_and_split_refuse_bad_destinations_and_empty_selections(library, tmp_path):
    with pytest.raises(EpisodeError, match="outside the source"):
        merge([library], library / "inside")
    assert not (library / "inside").exists()
    full = tmp_path / "full"
    full.mkdir()
    (full / "x.txt").write_text("keep me")
    with pytest.raises(EpisodeError, match="new or empty output folder"):
        split([library], full)
    assert [p.name for p in full.iterdir()] == ["x.txt"]
    with pytest.raises(EpisodeError, match="found none"):
        merge([library], tmp_path / "none", EpisodeFilter(player="nobody"))
    with pytest.raises(EpisodeError, match="does not exist"):
        merge([tmp_path / "missing"], tmp_path / "none")
    with pytest.raises(EpisodeError, match=r"expected a fraction in \[0, 1\)"):
        split([library], tmp_path / "none", validation=1.0)
    assert not (tmp_path / "none").exists()


def test_unreadable_files_are_skipped_and_reported(library, tmp_path):
    (library / "MountainCar-v0" / "broken.h5").write_bytes(b"not hdf5")
    selection = select([library])
    assert [p.name for p, _ in selection.unreadable] == ["broken.h5"]
    result = merge([library], tmp_path / "out")
    assert len(result.files) == 5
    assert not (tmp_path / "out" / "MountainCar-v0" / "broken.h5").exists()


def test_split_is_seeded_by_episode_and_per_env(library, tmp_path):
    before = _fingerprint(library)
    a = split([library], tmp_path / "a", validation=0.5, seed=1)
    b = split([library], tmp_path / "b", validation=0.5, seed=1)
    assert _fingerprint(library) == before

    def rel(paths, root):
        return sorted(str(p.relative_to(root)) for p in paths)

    assert rel(a.train, tmp_path / "a") == rel(b.train, tmp_path / "b")
    assert rel(a.validation, tmp_path / "a") == rel(b.validation, tmp_path / "b")
    assert len(a.train) + len(a.validation) == 5
    # Each env is in both parts: MountainCar 3 -> 1 or 2 validation, DoorKey 2 -> 1.
    for part, name in ((a.train, "train"), (a.validation, "validation")):
        envs = {p.parent.name for p in part}
        assert envs == {"MountainCar-v0", "MiniGrid-DoorKey-5x5-v0"}
        assert all(p.parent.parent.name == name for p in part)
    assert not {p.name for p in a.train} & {p.name for p in a.validation}
    manifest = json.loads((tmp_path / "a" / "manifest.json").read_text())
    assert manifest["seed"] == 1 and manifest["validation"] == 0.5

    # Different seeds give different splits of a larger set (checked on the index draw).
    import numpy as np

    draws = {tuple(split_indices(20, 0.25, np.random.default_rng(s))) for s in range(5)}
    assert len(draws) > 1 and all(len(d) == 5 for d in draws)
    assert len(split_indices(1, 0.5, np.random.default_rng(0))) == 0
    assert len(split_indices(3, 0.01, np.random.default_rng(0))) == 1
    assert len(split_indices(3, 0.0, np.random.default_rng(0))) == 0


def test_split_with_filters(library, tmp_path):
    result = split([library], tmp_path / "s", validation=0.2, flt=EpisodeFilter(tags=("good",)))
    assert len(result.train) + len(result.validation) == 3
    assert result.selection.rejected == 2

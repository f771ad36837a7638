"""Export to Minari, checked by loading the result with the real ``minari`` package."""

from __future__ import annotations

import json

import h5py
import minari
import numpy as np
import pytest

from demostudio.cli import main
from demostudio.cli.record_cmd import RecordConfig, record
from demostudio.episode import EpisodeError, load_episode, open_episode
from demostudio.interop.minari import export_minari

from .compare import assert_same, flat_infos


def _episodes_by_source(ds):
    metas = ds.storage.get_episode_metadata(ds.episode_indices)
    for episode, meta in zip(ds.iterate_episodes(), metas):
        yield episode, meta, json.loads(meta["demostudio"])


def test_export_loads_in_minari_and_matches_step_by_step(demos, minari_root):
    folder = demos["MountainCar-v0"][0].parent
    out = export_minari([folder], "demostudio/mountaincar-v0")
    assert out == minari_root / "demostudio" / "mountaincar-v0"

    ds = minari.load_dataset("demostudio/mountaincar-v0")
    sources = {p.name: load_episode(p) for p in demos["MountainCar-v0"]}
    assert ds.total_episodes == 3
    assert ds.total_steps == sum(len(d) for d in sources.values())
    seen = set()
    for episode, meta, ours in _episodes_by_source(ds):
        d = sources[ours["source_file"]]
        seen.add(ours["source_file"])
        T = len(d)
        assert len(episode) == T
        assert meta["seed"] == d.summary.seed
        assert_same(episode.observations, d.observations, "observations")
        assert episode.observations.shape[0] == T + 1
        assert_same(episode.actions, d.actions, "actions")
        assert_same(episode.rewards, d.rewards, "rewards")
        assert_same(episode.terminations, d.terminations, "terminations")
        assert_same(episode.truncations, d.truncations, "truncations")
        infos = flat_infos(episode.infos)
        extras = {k: infos.pop(k) for k in list(infos) if k.startswith("_demostudio/")}
        assert sorted(infos) == sorted(d.infos)
        for name, column in d.infos.items():
            assert_same(infos[name], column, f"infos/{name}")
            assert len(infos[name]) == T + 1
        assert_same(extras["_demostudio/timestamps"], d.timestamps, "timestamps")
        keys = [json.loads(k) for k in extras["_demostudio/keys"]]
        assert keys == [[], *d.keys]
        assert ours["controller"] == d.summary.controller
        assert ours["tags"] == list(d.summary.tags)
    assert seen == set(sources)

    # The keyboard episode's infos: the step-only key is marked absent at the reset.
    keyboard = next(e for e, _, o in _episodes_by_source(ds) if o["controller"] == "keyboard")
    present = keyboard.infos["_demostudio"]["info_present"]
    assert not present["score"][0] and present["score"][1:].all()
    assert not present["late"][:3].any() and present["late"][3:].all()

    md = ds.storage.metadata
    assert md["algorithm_name"] == "keyboard, policy:scripted-mountaincar"
    assert md["author"] == {"ada"}
    assert md["jpeg_encoding"] is False
    assert md["demostudio_export"]["frames_info_key"] is None
    assert any(r.startswith("gymnasium==") for r in md["requirements"])
    assert ds.env_spec.id == "MountainCar-v0"
    env = ds.recover_environment()
    env.close()
    ds.set_seed(0)
    assert len(ds.sample_episodes(2)) == 2


def test_export_dict_text_observations_and_frames(demos, minari_root):
    paths = demos["MiniGrid-DoorKey-5x5-v0"]
    export_minari(paths, "demostudio/doorkey-v0", frames=True)
    ds = minari.load_dataset("demostudio/doorkey-v0")
    assert ds.observation_space["mission"].__class__.__name__ == "Text"
    by_name = {p.name: p for p in paths}
    for episode, _, ours in _episodes_by_source(ds):
        with open_episode(by_name[ours["source_file"]]) as ep:
            d = ep.load(frames=True)
            assert_same(episode.observations, d.observations, "observations")
            assert isinstance(episode.observations["mission"][0], str)
            frames = episode.infos["frame"]
            assert frames.dtype == np.uint8 and frames.shape == d.frames.shape
            assert np.array_equal(frames, d.frames)  # bit-exact: never JPEG
    assert ds.storage.metadata["demostudio_export"]["frames_info_key"] == "frame"


def test_export_image_observations_are_lossless(atari, minari_root):
    export_minari([atari], "demostudio/breakout-v0", frames=True)
    ds = minari.load_dataset("demostudio/breakout-v0")
    (episode,) = list(ds.iterate_episodes())
    d = load_episode(atari, frames=True)
    assert episode.observations.shape == (len(d) + 1, 210, 160, 3)
    assert np.array_equal(episode.observations, d.observations)
    assert np.array_equal(episode.infos["frame"], d.frames)
    with h5py.File(minari_root / "demostudio" / "breakout-v0" / "data" / "main_data.hdf5") as f:
        stored = f["episode_0/infos/frame"]
        assert stored.compression == "gzip" and stored.chunks == (1, 210, 160, 3)
    assert_same(episode.infos["lives"], d.infos["lives"], "lives")
    # ALE gives "seeds" only at the reset: exported with its presence mask.
    assert list(episode.infos["_demostudio"]["info_present"]["seeds"]) == [True] + [False] * len(d)


def test_export_refuses_mixed_envs_and_leaves_nothing(demos, minari_root):
    with pytest.raises(EpisodeError) as err:
        export_minari(demos["root"], "demostudio/mixed-v0")
    assert err.value.field == "env_id" and "MountainCar-v0" in str(err.value)
    assert not (minari_root / "demostudio" / "mixed-v0").exists()


def test_export_bad_dataset_ids(demos, minari_root):
    paths = demos["MountainCar-v0"][:1]
    with pytest.raises(EpisodeError, match="expected a Minari dataset id") as err:
        export_minari(paths, "no version here")
    assert err.value.field == "dataset_id"
    first = export_minari(paths, "demostudio/once-v0")
    with pytest.raises(EpisodeError, match="already exists"):
        export_minari(paths, "demostudio/once-v0")
    assert minari.load_dataset("demostudio/once-v0").total_episodes == 1
    assert first.exists()


def test_export_frames_requested_but_not_recorded(tmp_path, minari_root):
    (path,) = record(
        RecordConfig("MountainCar-v0", episodes=1, out=tmp_path, seed=3, frames=False),
        progress=False,
    )
    with pytest.raises(EpisodeError, match="recorded without") as err:
        export_minari([path], "demostudio/noframes-v0", frames=True)
    assert err.value.field == "frames"
    assert not (minari_root / "demostudio" / "noframes-v0").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(EpisodeError, match="found none"):
        export_minari([empty], "demostudio/empty-v0")


def test_export_to_an_explicit_root(demos, tmp_path, minari_root):
    out = export_minari(demos["MountainCar-v0"][:1], "solo-v1", out=tmp_path / "elsewhere")
    assert out == tmp_path / "elsewhere" / "solo-v1"
    assert not (minari_root / "solo-v1").exists()
    ds = minari.MinariDataset(out / "data")
    assert ds.total_episodes == 1


def _changed_copies(demos, tmp_path, change) -> list:
    """Copies of two MountainCar episodes, the second changed by ``change(h5py.File)``."""
    folder = tmp_path / "episodes"
    folder.mkdir()
    copies = []
    for i, source in enumerate(demos["MountainCar-v0"][:2]):
        copy = folder / f"{i}-{source.name}"
        copy.write_bytes(source.read_bytes())
        copies.append(copy)
    with h5py.File(copies[1], "r+") as f:
        change(f)
    return copies


def _seed_2_70(f) -> None:
    f.attrs["seed"] = json.dumps(2**70)


def _nan_reward(f) -> None:
    f["rewards"][0] = np.nan


@pytest.mark.parametrize(
    "change, field, expected",
    [
        (_seed_2_70, "seed", "expected an integer from 0 to 2**64-1 or null, got an integer"),
        (_nan_reward, "rewards", "row 0: expected finite numbers, got nan"),
    ],
    ids=["seed-beyond-64-bits", "failure-after-the-first-episode"],
)
@pytest.mark.parametrize("namespace", ["new", "existing"])
def test_a_failed_export_leaves_nothing_behind(
    demos, tmp_path, capsys, change, field, expected, namespace
):
    """A seed that has no 64-bit HDF5 type is refused with the file and [seed] before Minari
    writes anything; an episode refused after the dataset was begun removes the dataset and
    the namespace folders and namespace_metadata.json Minari made for its id (what was there
    before stays)."""
    copies = _changed_copies(demos, tmp_path, change)
    out = tmp_path / "minari"
    before = {}
    if namespace == "existing":
        (out / "probe" / "deep").mkdir(parents=True)
        (out / "probe" / "deep" / "keep.txt").write_text("mine")
        before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    argv = ["export", str(copies[0].parent), "--format", "minari", "--out", str(out)]
    rc = main([*argv, "--dataset-id", "probe/deep/failed-v0", "--no-progress"])
    lines = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(lines) == 1, lines
    assert lines[0].startswith(f"demostudio: error: {copies[1]} [{field}]: {expected}"), lines
    if namespace == "new":
        assert not out.exists()
    else:
        assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
        assert sorted(out.rglob("*")) == sorted([*before, out / "probe", out / "probe" / "deep"])

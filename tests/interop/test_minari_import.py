"""Import from Minari: the round trip ours -> Minari -> ours, datasets made by others
(frames re-rendered by re-simulation, or left out with a note), and bad datasets."""

from __future__ import annotations

import json
import re
import shutil
import sys
import tracemalloc
import warnings
from pathlib import Path

import gymnasium as gym
import h5py
import minari
import numpy as np
import pytest
from minari.data_collector import EpisodeBuffer

from demostudio.cli import main
from demostudio.episode import EpisodeError, open_episode, verify_episode
from demostudio.interop.minari import export_minari, import_minari

from .compare import assert_same


def assert_same_episode(a: Path, b: Path, *, frames: bool) -> None:
    """Every step, every info row (with absences), every attribute the user sees."""
    with open_episode(a) as x, open_episode(b) as y:
        sx, sy = x.summary, y.summary
        for key in ("env_id", "env_kwargs", "seed", "controller", "player", "length"):
            assert getattr(sx, key) == getattr(sy, key), key
        for key in ("total_return", "terminated", "truncated", "tags", "notes", "fps"):
            assert getattr(sx, key) == getattr(sy, key), key
        for key in ("recorded_at", "reset_options", "key_map", "max_episode_steps"):
            assert sx.attrs.get(key) == sy.attrs.get(key), key
        dx, dy = x.load(frames=frames), y.load(frames=frames)
        assert_same(dx.observations, dy.observations, "observations")
        assert_same(dx.actions, dy.actions, "actions")
        assert_same(dx.rewards, dy.rewards, "rewards")
        assert_same(dx.terminations, dy.terminations, "terminations")
        assert_same(dx.truncations, dy.truncations, "truncations")
        assert_same(dx.timestamps, dy.timestamps, "timestamps")
        assert dx.keys == dy.keys
        assert dx.actor_names == dy.actor_names  # who acted comes back step by step
        np.testing.assert_array_equal(dx.actors, dy.actors)
        for i in range(len(dx) + 1):
            assert_same(x.info(i), y.info(i), f"info {i}")
        if frames:
            assert dy.frames is not None and np.array_equal(dx.frames, dy.frames)


def test_round_trip_preserves_every_step(demos, minari_root, tmp_path):
    sources = demos["MountainCar-v0"] + demos["MiniGrid-DoorKey-5x5-v0"]
    export_minari(demos["MountainCar-v0"], "rt/mountaincar-v0")  # no frames: re-rendered
    export_minari(demos["MiniGrid-DoorKey-5x5-v0"], "rt/doorkey-v0", frames=True)
    notes: list[str] = []
    imported = import_minari("rt/mountaincar-v0", tmp_path / "back", note=notes.append)
    imported += import_minari(str(minari_root / "rt" / "doorkey-v0"), tmp_path / "back")
    assert notes == []
    assert sorted(p.name for p in imported) == sorted(p.name for p in sources)
    for p in imported:
        assert p.parent.parent == tmp_path / "back"
        original = next(s for s in sources if s.name == p.name)
        assert p.parent.name == original.parent.name
        assert_same_episode(original, p, frames=True)
        assert verify_episode(p).ok
    assert not list((tmp_path / "back").glob("*/.import-*"))


def test_round_trip_atari(atari, minari_root, tmp_path):
    export_minari([atari], "rt/breakout-v0")
    (back,) = import_minari("rt/breakout-v0", tmp_path)
    assert back.parent.name == "ALE-Breakout-v5"
    assert_same_episode(atari, back, frames=True)  # frames re-rendered, bit-exact


def _foreign_dataset(dataset_id: str, seeds: list, *, scale_obs: float = 1.0, **kwargs):
    """A CartPole dataset as another tool would write it (random actions, no DemoStudio
    metadata), made with Minari's own API."""
    env = gym.make("CartPole-v1")
    rng = np.random.default_rng(0)
    buffers = []
    for seed in seeds:
        obs, _ = env.reset(seed=seed if seed is not None else 99)
        observations, actions, rewards, terms, truncs = [obs], [], [], [], []
        for _ in range(15):
            a = int(rng.integers(2))
            obs, r, term, trunc, _ = env.step(a)
            observations.append(obs)
            actions.append(a)
            rewards.append(r)
            terms.append(term)
            truncs.append(trunc)
            if term or trunc:
                break
        n = len(observations)
        buffers.append(
            EpisodeBuffer(
                seed=seed,
                observations=np.array(observations) * scale_obs,
                actions=np.array(actions),
                rewards=np.array(rewards),
                terminations=np.array(terms),
                truncations=np.array(truncs),
                infos={"step": np.arange(n), "label": [f"row {i}" for i in range(n)]},
            )
        )
    env.close()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        minari.create_dataset_from_buffers(
            dataset_id, buffers, algorithm_name="random", author="someone else", **kwargs
        )


def test_import_foreign_dataset_rerenders_frames(minari_root, tmp_path):
    _foreign_dataset("other/cartpole-v0", [11, 12], env="CartPole-v1")
    paths = import_minari("other/cartpole-v0", tmp_path)
    assert [p.name for p in paths] == [f"other-cartpole-v0-ep0000{i}.h5" for i in (0, 1)]
    ds = minari.load_dataset("other/cartpole-v0")
    for p, episode in zip(paths, ds.iterate_episodes()):
        with open_episode(p) as ep:
            s = ep.summary
            assert s.env_id == "CartPole-v1" and s.seed in (11, 12)
            assert s.controller == "minari:random" and s.player == "someone else"
            assert "Imported from Minari dataset other/cartpole-v0" in s.notes
            assert ep.has_frames and ep.frame_shape == (400, 600, 3)
            d = ep.load()
            assert_same(d.observations, episode.observations, "observations")
            assert_same(d.actions, episode.actions, "actions")
            assert ep.info(3) == {"step": 3, "label": "row 3"}
        result = verify_episode(p)
        assert result.ok, result.describe()


def test_import_without_seed_or_with_other_observations_leaves_frames_out(minari_root, tmp_path):
    _foreign_dataset("other/noseed-v0", [None], env="CartPole-v1")
    _foreign_dataset("other/scaled-v0", [5], env="CartPole-v1", scale_obs=2.0)
    notes: list[str] = []
    (noseed,) = import_minari("other/noseed-v0", tmp_path, note=notes.append)
    (scaled,) = import_minari("other/scaled-v0", tmp_path, note=notes.append)
    with open_episode(noseed) as ep:
        assert not ep.has_frames
        assert "frames left out: the dataset stores no reset seed" in ep.summary.notes
    with open_episode(scaled) as ep:
        assert not ep.has_frames
        assert "re-simulation diverged at reset in observations" in ep.summary.notes
    assert len(notes) == 2 and "no reset seed" in notes[0] and "diverged" in notes[1]
    # Asked not to re-render: no frames and no note.
    notes.clear()
    (plain,) = import_minari("other/noseed-v0", tmp_path / "plain", rerender_frames=False)
    assert notes == []
    with open_episode(plain) as ep:
        assert not ep.has_frames and "frames left out" not in ep.summary.notes


def _only_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()] if folder.exists() else []


def test_import_refuses_unrecreatable_spaces_and_imports_nothing(minari_root, tmp_path):
    _foreign_dataset("bad/space-v0", [1, 2], env="CartPole-v1")
    meta = minari_root / "bad" / "space-v0" / "data" / "metadata.json"
    data = json.loads(meta.read_text())
    data["observation_space"] = json.dumps({"type": "Graph", "node_space": None})
    meta.write_text(json.dumps(data))
    out = tmp_path / "out"
    with pytest.raises(EpisodeError, match="spaces can be recreated") as err:
        import_minari("bad/space-v0", out)
    assert err.value.field == "metadata.json"
    assert _only_files(out) == [] and not out.exists()


def test_import_refuses_unrecreatable_env_and_imports_nothing(minari_root, tmp_path):
    _foreign_dataset("bad/env-v0", [1], env="CartPole-v1")
    meta = minari_root / "bad" / "env-v0" / "data" / "metadata.json"
    data = json.loads(meta.read_text())
    data["env_spec"] = (
        data["env_spec"]
        .replace("CartPole-v1", "NoSuchGame-v3")
        .replace("gymnasium.envs.classic_control.cartpole:CartPoleEnv", "nowhere:Nothing")
    )
    meta.write_text(json.dumps(data))
    with pytest.raises(EpisodeError, match="cannot recreate the env") as err:
        import_minari("bad/env-v0", tmp_path / "out")
    assert err.value.field == "env_spec" and "NoSuchGame-v3" in str(err.value)
    assert not (tmp_path / "out").exists()

    space = gym.make("CartPole-v1")
    _foreign_dataset(
        "bad/nospec-v0",
        [1],
        observation_space=space.observation_space,
        action_space=space.action_space,
    )
    with pytest.raises(EpisodeError, match="expected an env spec") as err:
        import_minari("bad/nospec-v0", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_import_failure_midway_leaves_nothing_and_clashes_are_refused(demos, minari_root, tmp_path):
    export_minari(demos["MiniGrid-DoorKey-5x5-v0"], "rt/twice-v0", frames=True)
    out = tmp_path / "out"
    first = import_minari("rt/twice-v0", out)
    before = sorted(_only_files(out))
    with pytest.raises(EpisodeError, match="already exist"):
        import_minari("rt/twice-v0", out)
    assert sorted(_only_files(out)) == before  # nothing added, nothing half-written
    assert all(p.exists() for p in first)

    # A dataset whose second episode is broken: the first is not imported either.
    data_file = minari_root / "rt" / "twice-v0" / "data" / "main_data.hdf5"
    import h5py

    with h5py.File(data_file, "a") as f:
        del f["episode_1/rewards"]
        f["episode_1/rewards"] = np.zeros(2)
    with pytest.raises(EpisodeError, match="expected 3 rows") as err:
        import_minari("rt/twice-v0", tmp_path / "fresh")
    assert err.value.field == "episode_1/observations/direction"  # checked before reading
    assert not (tmp_path / "fresh").exists()


def test_unknown_dataset_id(minari_root, tmp_path):
    with pytest.raises(EpisodeError, match="expected a local Minari dataset"):
        import_minari("nobody/nothing-v0", tmp_path)


def test_import_jpeg_image_dataset_rerenders_within_tolerance(minari_root, tmp_path):
    """Minari JPEG-encodes image observations by default: they come back approximately,
    frames are still re-rendered (checked with a tolerance) and the notes say so."""
    from demostudio.episode import make_env

    env = make_env("ALE/Breakout-v5", max_episode_steps=10)
    obs, _ = env.reset(seed=3)
    observations, actions = [obs], []
    rewards, terms, truncs = [], [], []
    for t in range(10):
        obs, r, term, trunc, _ = env.step(t % 4)
        observations.append(obs)
        actions.append(t % 4)
        rewards.append(r)
        terms.append(term)
        truncs.append(trunc)
    buffer = EpisodeBuffer(
        seed=3,
        observations=np.array(observations),
        actions=np.array(actions),
        rewards=np.array(rewards),
        terminations=np.array(terms),
        truncations=np.array(truncs),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        minari.create_dataset_from_buffers("other/breakout-v0", [buffer], env=env)
    env.close()
    notes: list[str] = []
    (path,) = import_minari("other/breakout-v0", tmp_path, note=notes.append)
    assert len(notes) == 1 and "JPEG" in notes[0]
    with open_episode(path) as ep:
        assert ep.has_frames and "JPEG-encoded (lossy)" in ep.summary.notes
        stored = ep.load().observations.astype(np.int16)
    exact = np.array(observations, dtype=np.int16)
    assert stored.shape == exact.shape
    assert 0 < np.mean(np.abs(stored - exact)) < 8  # JPEG: close, not equal


def test_import_divergence_mid_episode_drops_frames_of_that_episode_only(minari_root, tmp_path):
    _foreign_dataset("other/reward-v0", [21, 22], env="CartPole-v1")
    data_file = minari_root / "other" / "reward-v0" / "data" / "main_data.hdf5"
    import h5py

    with h5py.File(data_file, "a") as f:
        f["episode_1/rewards"][5] = 7.0
    notes: list[str] = []
    good, bad = import_minari("other/reward-v0", tmp_path, note=notes.append)
    assert notes == [
        "episode 1: frames left out: re-simulation diverged at step 5 in rewards: "
        "stored 7, re-simulated 1."
    ]
    with open_episode(good) as ep:
        assert ep.has_frames
    with open_episode(bad) as ep:
        assert not ep.has_frames and "diverged at step 5 in rewards" in ep.summary.notes
        assert ep.load().rewards[5] == 7.0  # the data is imported as stored


def _hostile_dataset(demos, minari_root: Path, change) -> tuple[Path, Path]:
    """A dataset exported from our episodes, its data file changed by ``change(f, outside)``;
    and a file outside the dataset that a link may point at."""
    export_minari(demos["MountainCar-v0"][:2], "bad/hostile-v0")
    data_file = minari_root / "bad" / "hostile-v0" / "data" / "main_data.hdf5"
    outside = minari_root.parent / "outside.hdf5"
    shutil.copyfile(data_file, outside)
    with h5py.File(data_file, "a") as f:
        change(f, outside)
    return data_file, outside


def _rewards_external(f, outside: Path) -> None:
    del f["episode_1/rewards"]
    f["episode_1/rewards"] = h5py.ExternalLink(str(outside), "/episode_1/rewards")


def _actions_soft(f, outside: Path) -> None:
    del f["episode_0/actions"]
    f["episode_0/actions"] = h5py.SoftLink("/episode_1/actions")


def _observations_huge(f, outside: Path) -> None:
    del f["episode_0/observations"]
    f.create_dataset(
        "episode_0/observations", shape=(3 * 10**7, 2), dtype="f4", chunks=(4096, 2)
    )  # 240 MB declared, nothing stored


@pytest.mark.parametrize(
    "change, field, expected",
    [
        (_rewards_external, "episode_1/rewards", "got an external link to .*outside.hdf5"),
        (_actions_soft, "episode_0/actions", "got a soft link"),
        (_observations_huge, "episode_0/observations", r"shape \(30000000, 2\) declared without"),
    ],
    ids=["external-link", "soft-link", "huge-declared"],
)
def test_import_checks_the_data_file_before_reading_it(
    demos, minari_root, tmp_path, capsys, change, field, expected
):
    """A link out of the data file is refused (never followed) and a declared shape is checked
    before anything is read: one line naming the file and the field, exit 2, no output folder,
    nothing allocated for what the file only declares."""
    data_file, outside = _hostile_dataset(demos, minari_root, change)
    before = outside.read_bytes()
    out = tmp_path / "out"
    tracemalloc.start()
    try:
        rc = main(["import", "bad/hostile-v0", "--out", str(out)])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert rc == 2 and len(lines) == 1, captured
    assert lines[0].startswith(f"demostudio: error: {data_file} [{field}]: "), lines
    assert re.search(expected, lines[0]), lines
    assert not out.exists() and outside.read_bytes() == before
    assert peak < 100 * 2**20, peak


def test_the_dataset_limit_applies_per_episode_not_per_file(tmp_path, monkeypatch):
    """A Minari file of many episodes holds more datasets than one episode file may; the
    check counts them one episode at a time (here with the limit lowered to 20)."""
    from demostudio.episode import hostile
    from demostudio.interop.minari_check import check_hdf5_episodes

    path = tmp_path / "main_data.hdf5"
    with h5py.File(path, "w") as f:
        for i in range(10):
            g = f.create_group(f"episode_{i}")
            g["observations"] = np.zeros((4, 2), np.float32)
            g["actions"] = np.zeros(3, np.int64)
            g["rewards"] = np.zeros(3, np.float32)
            g["terminations"] = np.zeros(3, bool)
            g["truncations"] = np.zeros(3, bool)
    monkeypatch.setattr(hostile, "MAX_OBJECTS", 20)
    check_hdf5_episodes(path, range(10))  # 50 datasets in all, 5 per episode
    with h5py.File(path, "a") as f:
        for k in range(20):
            f.create_group(f"episode_3/extra_{k}")
    with pytest.raises(EpisodeError, match=r"\[episode_3/.*expected at most 20 datasets"):
        check_hdf5_episodes(path, range(10))


@pytest.mark.parametrize("given", ["folder", "id"])
@pytest.mark.parametrize("count", [10**12, -1, "3", None])
def test_a_local_dataset_counting_absurd_episodes_is_refused_first(
    demos, minari_root, tmp_path, capsys, count, given
):
    """metadata.json's total_episodes sizes Minari's index array before anything is read;
    a local folder's count, or that of the dataset an id names in the datasets root
    ($MINARI_DATASETS_PATH), is checked first: one line naming the file and the field."""
    export_minari(demos["MountainCar-v0"][:1], "bad/count-v0")
    data = minari_root / "bad" / "count-v0" / "data"
    meta = json.loads((data / "metadata.json").read_text())
    meta["total_episodes"] = count
    (data / "metadata.json").write_text(json.dumps(meta))
    out = tmp_path / "out"
    dataset = str(data.parent) if given == "folder" else "bad/count-v0"
    assert main(["import", dataset, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"demostudio: error: {data / 'metadata.json'} [total_episodes]: ")
    assert "expected a count from 0 to 10000000" in err and not out.exists()


def _name_module(demos, minari_root: Path, where: str, module: str) -> Path:
    """A DemoStudio export (frames left out, so the import re-simulates) whose env id is
    ``module:Evil-v0`` in its env spec or in the attributes embedded in its episode."""
    export_minari(demos["MountainCar-v0"][:1], "bad/module-v0")
    data = minari_root / "bad" / "module-v0" / "data"
    if where == "env_spec":
        meta = json.loads((data / "metadata.json").read_text())
        spec = json.loads(meta["env_spec"])
        spec["id"] = f"{module}:Evil-v0"
        meta["env_spec"] = json.dumps(spec)
        (data / "metadata.json").write_text(json.dumps(meta))
    else:
        with h5py.File(data / "main_data.hdf5", "a") as f:
            attrs = json.loads(f["episode_0"].attrs["demostudio"])
            f["episode_0"].attrs["demostudio"] = json.dumps(
                {**attrs, "env_id": f"{module}:Evil-v0"}
            )
    return data


@pytest.mark.parametrize(
    "where, field",
    [("env_spec", "env_spec"), ("episode", "episode_0/demostudio/env_id")],
    ids=["env-spec", "episode-attrs"],
)
def test_import_never_imports_a_module_the_dataset_names(
    demos, minari_root, tmp_path, capsys, monkeypatch, where, field
):
    """gymnasium.make("module:Env-v0") imports ``module``: a dataset naming one is refused
    with the check episode files and checkpoints use, before any env is made."""
    module = "demostudio_probe_imported_" + where.replace("-", "_")
    marker = tmp_path / "imported"
    (tmp_path / f"{module}.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    data = _name_module(demos, minari_root, where, module)
    out = tmp_path / "out"
    assert main(["import", "bad/module-v0", "--out", str(out)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"demostudio: error: {data} [{field}]: "), lines
    assert "no module:Env form" in lines[0] and f"{module}:Evil-v0" in lines[0], lines
    assert module not in sys.modules and not marker.exists()
    assert not out.exists()


def test_import_refuses_a_seed_gymnasium_refuses(minari_root, tmp_path, capsys):
    """A foreign episode's reset seed is checked as an episode file's (0 to 2**64-1) before
    re-simulation resets with it: one line naming the episode's seed, nothing imported."""
    _foreign_dataset("bad/seed-v0", [11, 12], env="CartPole-v1")
    data = minari_root / "bad" / "seed-v0" / "data"
    with h5py.File(data / "main_data.hdf5", "a") as f:
        f["episode_1"].attrs["seed"] = -5
    out = tmp_path / "out"
    assert main(["import", "bad/seed-v0", "--out", str(out)]) == 2
    err = capsys.readouterr().err  # episode 0's progress bar, then the refusal
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if "error" in line]
    assert lines == [
        f"demostudio: error: {data} [episode_1/seed]: expected an integer from 0 to 2**64-1 "
        "or null, got an integer -5"
    ]
    assert not out.exists()

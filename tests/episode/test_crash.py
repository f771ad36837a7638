"""A recording process killed with SIGKILL mid-episode loses only that episode's unflushed tail."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import textwrap
import time
import warnings
import zlib
from pathlib import Path

import h5py
import numpy as np
import pytest
from gymnasium import spaces

from demostudio.cli import main
from demostudio.episode import (
    EpisodeWriter,
    find_partials,
    load_episode,
    read_summary,
    recover_folder,
    recover_partial,
    scan,
    validate,
    verify_episode,
)
from demostudio.episode.journal import MAGIC

ATTRS = {
    "env_id": "ALE/Pong-v5",
    "env_kwargs": {},
    "seed": 7,
    "recorded_at": "2026-11-23T12:00:00+00:00",
    "length": 0,
    "total_return": 0.0,
    "terminated": False,
    "truncated": False,
}

CHILD = textwrap.dedent(
    """
    import sys, time
    from demostudio.controllers import scripted_controller
    from demostudio.episode import RecordEpisodes, make_env

    out = sys.argv[1]
    env = RecordEpisodes(make_env("MountainCar-v0", render_mode="rgb_array"), out,
                         controller="policy:scripted")
    ctrl = scripted_controller("MountainCar-v0")
    for episode in range(3):
        obs, info = env.reset(seed=episode)
        print("started", episode, flush=True)
        done = False
        while not done:
            if episode == 2:
                time.sleep(0.02)  # the third episode is slow, so it is killed mid-way
            obs, r, term, trunc, info = env.step(ctrl.act(env, obs))
            done = term or trunc
        print("saved", episode, flush=True)
    print("all done", flush=True)
    """
)


def test_sigkill_mid_episode(tmp_path, capsys):
    out = tmp_path / "demos"
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(out)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "SDL_VIDEODRIVER": "dummy"},
    )
    lines = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline().strip()
        lines.append(line)
        if line == "started 2":
            break
    assert lines[-1] == "started 2", lines
    time.sleep(1.5)  # past the writer's one-second flush
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL

    # Every earlier episode reads back intact and valid.
    entries = scan(out)
    finished = [e for e in entries if not e.partial]
    assert len(finished) == 2
    for e in finished:
        assert e.error is None and validate(e.path) == []
        assert e.summary.terminated and not e.summary.recovered
        assert verify_episode(e.path).ok
        assert len(load_episode(e.path)) == e.summary.length

    # The killed one is left as a .partial, flagged by ls, and recovered (or reported).
    partials = find_partials(out)
    assert len(partials) == 1
    assert main(["ls", str(out)]) == 0
    assert "PARTIAL" in capsys.readouterr().out
    assert main(["recover", str(out)]) == 0
    assert "recovered" in capsys.readouterr().out
    recovered = [e for e in scan(out) if e.summary and e.summary.recovered]
    assert len(recovered) == 1 and find_partials(out) == []
    assert list(out.glob("**/*.journal")) == []
    ep = recovered[0]
    assert validate(ep.path) == [] and ep.summary.truncated and ep.summary.length > 0
    # What was kept is exactly what was played: it re-simulates.
    assert verify_episode(ep.path).ok


def _bench_crash():
    """benchmarks/bench_crash.py, whose drill this test runs at a small size."""
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_crash.py"
    spec = importlib.util.spec_from_file_location("bench_crash", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_kill_drill_every_kill_recovers_at_most_a_second_lost():
    """Ten SIGKILLs of an Atari recording at random moments, three of them the instant an
    HDF5 flush starts: every killed episode recovers, valid, losing at most ~1 s of steps."""
    result = _bench_crash().drill(
        10, "ALE/Pong-v5", fps=0, max_seconds=0.6, flush_share=0.3, seed=1, compare=False
    )
    assert result["count"] == 10 and result["recovered_count"] == 10, result["kills"]
    assert result["seconds_lost_max"] <= 1.0, result["kills"]
    assert result["steps_taken_max"] > 0
    for kill in result["kills"]:
        # At most what waited in the writer's queue (256) and the item in its hands.
        assert kill["steps_recovered"] >= kill["steps_taken"] - 257, kill


def _snapshot(tmp_path: Path, steps: int, flush_interval: float = 60.0):
    """The files a recording of ``steps`` Atari-sized steps has on disk while still open (what
    a kill would leave), copied to ``tmp_path/crashed``; plus the episode as saved normally."""
    space = spaces.Box(0, 255, (210, 160, 3), np.uint8)
    rng = np.random.default_rng(0)
    frames = rng.integers(0, 4, (steps + 1, 210, 160, 3), dtype=np.uint8)
    writer = EpisodeWriter(
        tmp_path / "live" / "ep.h5",
        space,
        spaces.Discrete(4),
        {**ATTRS, "controller": "policy:agent"},
        flush_interval=flush_interval,
    )
    writer.reset(frames[0], {"lives": 3}, frames[0])
    for t in range(steps):
        if t == steps // 2:
            writer.set_actor("person:ann")
        info = {"lives": 3, "score": float(t)} if t % 3 else {"lives": 2}
        writer.step(t % 4, frames[t + 1], float(t), False, False, info, frames[t + 1], keys=["a"])
    while writer.written_steps < steps:
        time.sleep(0.005)
    crashed = tmp_path / "crashed"
    crashed.mkdir()
    for src in (writer.partial_path, writer.journal_path):
        shutil.copyfile(src, crashed / src.name)
    saved = writer.close()
    return crashed / writer.partial_path.name, crashed / writer.journal_path.name, saved


def _assert_prefix(path: Path, saved: Path, n: int) -> None:
    got, full = load_episode(path, frames=True), load_episode(saved, frames=True)
    assert len(got) == n and got.summary.recovered and validate(path) == []
    np.testing.assert_array_equal(got.frames, full.frames[: n + 1])
    np.testing.assert_array_equal(got.actions, full.actions[:n])
    np.testing.assert_array_equal(got.rewards, full.rewards[:n])
    np.testing.assert_array_equal(got.actors, full.actors[:n])
    assert got.actor_names == full.actor_names[: len(got.actor_names)]
    assert set(got.infos) <= set(full.infos) and "lives" in got.infos
    for key in got.infos:  # a key that appeared later is absent from a short prefix
        np.testing.assert_array_equal(got.infos[key], full.infos[key][: n + 1])
    assert got.keys == full.keys[:n]


def test_journal_recovers_every_step_the_writer_handled(tmp_path):
    """No flush happened (the interval is a minute): the journal alone brings back every step,
    identical to the saved episode, whatever HDF5 had on disk."""
    partial, journal, saved = _snapshot(tmp_path, 40)
    r = recover_partial(partial)
    assert r.episode is not None and r.steps == 40, r
    _assert_prefix(r.episode, saved, 40)
    assert not partial.exists() and not journal.exists()


def test_journal_cut_at_any_byte_recovers_the_complete_records(tmp_path):
    """A journal cut anywhere (or with a flipped byte) recovers exactly the steps whose records
    are whole before the damage, and never raises."""
    partial, journal, saved = _snapshot(tmp_path, 40)
    data = journal.read_bytes()
    ends = [len(MAGIC)]  # byte offset where each record ends
    while ends[-1] < len(data):
        (length,) = struct.unpack_from("<I", data, ends[-1])
        ends.append(ends[-1] + 8 + length)
    # records: the attributes, the reset, 20 steps, the ``actor_names`` change, 20 steps
    assert len(ends) == 1 + 43
    rng = np.random.default_rng(1)
    cuts = set(rng.integers(0, len(data), 25).tolist()) | {ends[1], ends[2], ends[3] - 1}
    cuts = sorted(cuts | {ends[22], ends[23], ends[23] + 1, len(data)})
    for i, cut in enumerate(cuts):
        case = tmp_path / f"cut-{i}"
        case.mkdir()
        (case / journal.name).write_bytes(data[:cut])
        shutil.copyfile(partial, case / partial.name)
        r = recover_partial(case / partial.name)
        whole = sum(end <= cut for end in ends[1:])  # complete records
        steps = max(0, whole - 2 - (whole > 22))
        if whole >= 2:  # the attributes and the reset are in: an episode comes back
            assert r.episode is not None and r.steps == steps, (cut, r)
            _assert_prefix(r.episode, saved, steps)
        else:  # killed before the reset was recorded, and nothing was flushed: nothing to keep
            assert r.episode is None and "removed" in r.reason, (cut, r)
            assert list(case.iterdir()) == []
    flipped = bytearray(data)
    flipped[(ends[9] + ends[10]) // 2] ^= 0xFF  # inside the 8th step's record
    (tmp_path / "flip").mkdir()
    (tmp_path / "flip" / journal.name).write_bytes(bytes(flipped))
    shutil.copyfile(partial, tmp_path / "flip" / partial.name)
    r = recover_partial(tmp_path / "flip" / partial.name)
    assert r.steps == 7
    _assert_prefix(r.episode, saved, 7)


def test_partial_without_journal_recovers_up_to_its_last_flush(tmp_path):
    partial, journal, saved = _snapshot(tmp_path, 30, flush_interval=0.0)
    journal.unlink()
    r = recover_partial(partial)
    assert r.episode is not None and 0 < r.steps <= 30, r
    _assert_prefix(r.episode, saved, r.steps)


def test_recover_reports_missing_and_leftover_files(tmp_path, capsys):
    assert recover_partial(tmp_path / "nope.h5.partial").reason == "no such file"
    partial, journal, saved = _snapshot(tmp_path, 5)
    partial.unlink()  # killed after the rename, before the journal was deleted
    shutil.copyfile(saved, partial.with_name("ep.h5"))
    (r,) = recover_folder(partial.parent)
    assert r.episode == partial.with_name("ep.h5") and "leftover journal" in r.reason
    assert not journal.exists()


def test_hostile_journal_records_never_raise(tmp_path):
    """Records with a valid checksum but damaged contents (a hostile or buggy journal): recovery
    says what happened, never raises, and reads nothing outside the record."""
    partial, journal, _ = _snapshot(tmp_path, 6)
    data = journal.read_bytes()
    rng = np.random.default_rng(2)
    for i in range(30):
        pos, records = len(MAGIC), []
        while pos < len(data):
            (length,) = struct.unpack_from("<I", data, pos)
            records.append(bytearray(data[pos + 8 : pos + 8 + length]))
            pos += 8 + length
        body = records[int(rng.integers(len(records)))]
        (header_len,) = struct.unpack_from("<I", body)
        for _ in range(3):  # flip bytes of the JSON header (or its length) and re-checksum
            body[int(rng.integers(0, 4 + header_len))] ^= int(rng.integers(1, 256))
        out = bytearray(MAGIC)
        for rec in records:
            out += struct.pack("<II", len(rec), zlib.crc32(rec)) + rec
        case = tmp_path / f"hostile-{i}"
        case.mkdir()
        (case / journal.name).write_bytes(bytes(out))
        shutil.copyfile(partial, case / partial.name)
        r = recover_partial(case / partial.name)
        assert isinstance(r.reason, str) and r.steps <= 6
        if r.episode is not None:
            assert validate(r.episode) == []


def _cli_recover(path: Path, capsys) -> tuple[int, list[str]]:
    code = main(["recover", str(path)])
    captured = capsys.readouterr()
    return code, (captured.out + captured.err).strip().splitlines()


def _hostile_partial(tmp_path: Path, change) -> tuple[Path, dict[Path, bytes]]:
    """A .partial without a journal (so it is cut back to its last flush) changed by
    ``change(f, outside)``; plus the bytes of every file, to check that none changed."""
    partial, journal, saved = _snapshot(tmp_path, 30, flush_interval=0.0)
    journal.unlink()
    outside = tmp_path / "outside" / "victim.h5"
    outside.parent.mkdir()
    shutil.copyfile(saved, outside)
    with h5py.File(partial, "r+") as f:
        change(f, outside)
    files = [partial, outside]
    return partial, {p: p.read_bytes() for p in files}


def _external_links(f: h5py.File, outside: Path) -> None:
    for name in ("observations", "frames"):
        del f[name]
        f[name] = h5py.ExternalLink(str(outside), "/" + name)


def _soft_link(f: h5py.File, outside: Path) -> None:
    del f["rewards"]
    f["rewards"] = h5py.SoftLink("/truncations")


def _huge(f: h5py.File, outside: Path) -> None:
    n = 2 * 10**8
    f.attrs["flushed_steps"] = json.dumps(n)
    for name in ("observations", "frames", "timestamps"):
        f[name].resize(n + 1, axis=0)
    for name in ("actions", "rewards", "terminations", "truncations", "keys", "actors"):
        f[name].resize(n, axis=0)


def _more_than_stored(f: h5py.File, outside: Path) -> None:
    f.attrs["flushed_steps"] = json.dumps(10**6)


def _action_outside_space(f: h5py.File, outside: Path) -> None:
    f["actions"][2] = 99  # Discrete(4): validate refuses the cut episode


@pytest.mark.parametrize(
    "change, field, expected",
    [
        (_external_links, r"(observations|frames)", "external link"),
        (_soft_link, "rewards", "soft link"),
        (_huge, r"\w+", "declared without it"),
        (_more_than_stored, "actions", "expected at least 1000000 rows"),
        (_action_outside_space, "actions", "would not be valid: .*step 2: expected an action"),
    ],
    ids=["external-link", "soft-link", "huge", "more-than-stored", "invalid-once-cut"],
)
def test_recover_leaves_a_hostile_partial_untouched(tmp_path, capsys, change, field, expected):
    """A .partial that links out of the file, declares more than it stores, or would cut to an
    episode validate refuses: one line naming the file and the field, exit 1, the .partial and
    the file it points at unchanged, nothing published."""
    partial, before = _hostile_partial(tmp_path, change)
    code, lines = _cli_recover(partial, capsys)
    assert code == 1 and len(lines) == 1, lines
    assert lines[0].startswith(f"unusable   {partial}  ("), lines
    assert re.search(rf"\[{field}\]: ", lines[0]) and re.search(expected, lines[0]), lines
    assert {p: p.read_bytes() for p in before} == before
    assert sorted(p.name for p in partial.parent.iterdir()) == [partial.name]


def test_partial_with_unwritten_capacity_recovers(tmp_path):
    """Frames the writer reserved but never wrote (its capacity doubles) may declare far more
    than the file stores: only the rows that are kept count."""

    def reserve(f: h5py.File, outside: Path) -> None:
        f["frames"].resize(f["frames"].shape[0] + 2000, axis=0)  # 200 MB of unwritten frames

    partial, _ = _hostile_partial(tmp_path, reserve)
    r = recover_partial(partial)
    assert r.episode is not None and r.steps > 0, r
    assert validate(r.episode) == [] and not partial.exists()


def test_a_partial_whose_rewards_overflow_recovers_without_a_warning(tmp_path):
    def huge_rewards(f: h5py.File, outside: Path) -> None:
        f["rewards"][...] = 1e308  # finite each, their sum past float64

    partial, _ = _hostile_partial(tmp_path, huge_rewards)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's overflow warning would reach the user
        r = recover_partial(partial)
        assert r.episode is not None and validate(r.episode) == []
    assert read_summary(r.episode).total_return == np.inf  # as the writer's total would be

"""Hostile episode files: every class below, for each of ``validate``, ``info``,
``verify``, ``ls`` and the ``train --demos`` loading path, gives one clean line naming the file
and the field, a non-zero exit, no traceback, no hang, bounded memory and nothing read outside
the file, while the good files beside the bad one still list and load.

The commands run in one separate process (tests/episode/hostile_driver.py) under
RLIMIT_AS with a watchdog per command; what each command opened is traced with strace when
it is installed. External targets are a FIFO (any read of it hangs, which the watchdog
catches), a copy of a good episode and /etc/passwd.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import h5py
import numpy as np
import pytest

DRIVER = Path(__file__).with_name("hostile_driver.py")
PEAK_MB = 400  # the interpreter with gymnasium, h5py and pygame holds ~100 MB; a bomb is GBs
FLIP_SEEDS = range(12)


class Case(NamedTuple):
    name: str
    group: str
    make: Callable[[Path, Path, Path], None]
    """make(bad, good, outside): write the hostile file ``bad`` from the good episode."""
    field: str | None
    """The field the error must name (None: any field; "": none, the file cannot be opened)."""


def _copy(make):
    def build(bad: Path, good: Path, outside: Path) -> None:
        shutil.copy(good, bad)
        with h5py.File(bad, "r+") as f:
            make(f, outside)

    return build


def _replace(name: str, new):
    def edit(f: h5py.File, outside: Path) -> None:
        del f[name]
        f[name] = new(outside)

    return _copy(edit)


def _attr(key: str, raw):
    def edit(f: h5py.File, outside: Path) -> None:
        f.attrs[key] = raw

    return _copy(edit)


def _json_attr(key: str, value):
    return _attr(key, json.dumps(value))


def _external_storage(f: h5py.File, outside: Path) -> None:
    n = f["rewards"].shape[0]
    del f["rewards"]
    f.create_dataset("rewards", (n,), "f8", external=[(str(outside / "pipe"), 0, n * 8)])


def _lzf_rewards(f: h5py.File, outside: Path) -> None:
    data = f["rewards"][()]
    del f["rewards"]
    f.create_dataset("rewards", data=data, chunks=True, compression="lzf")


def _virtual(f: h5py.File, outside: Path) -> None:
    n = f["rewards"].shape[0]
    del f["rewards"]
    layout = h5py.VirtualLayout((n,), "f8")
    layout[:] = h5py.VirtualSource(str(outside / "pipe"), "rewards", shape=(n,))
    f.create_virtual_dataset("rewards", layout)


def _soft_loop(f: h5py.File, outside: Path) -> None:
    del f["rewards"]
    f["rewards"] = h5py.SoftLink("/loop")
    f["loop"] = h5py.SoftLink("/rewards")


def _hard_cycle(f: h5py.File, outside: Path) -> None:
    group = f.create_group("infos") if "infos" not in f else f["infos"]
    group["up"] = f  # a hard link back to the root: walking it never ends


def _nested_external(f: h5py.File, outside: Path) -> None:
    group = f.create_group("infos") if "infos" not in f else f["infos"]
    group["evil"] = h5py.ExternalLink(str(outside / "pipe"), "/x")


def _huge_frames(f: h5py.File, outside: Path) -> None:
    h, w = f["frames"].shape[1:3]
    del f["frames"]
    f.create_dataset("frames", (10**9, h, w, 3), np.uint8, chunks=(1, h, w, 3), compression="gzip")


def _huge_length(f: h5py.File, outside: Path) -> None:
    n = 10**9
    f.attrs["length"] = json.dumps(n)
    for name in ("observations", "frames", "timestamps"):
        f[name].resize(n + 1, axis=0)
    for name in ("actions", "rewards", "terminations", "truncations", "keys"):
        f[name].resize(n, axis=0)


def _huge_actions(f: h5py.File, outside: Path) -> None:
    n = f["actions"].shape[0]
    del f["actions"]
    f.create_dataset("actions", (n, 10**7), "i8", chunks=(1, 10**6))


def _unstored_infos(f: h5py.File, outside: Path) -> None:
    n = f["timestamps"].shape[0]
    for i in range(40):
        f.create_dataset(f"infos/k{i:02d}", (n, 10**5), "f8", chunks=(1, 10**5))


def _set_action(step: int, value: int):
    def edit(f: h5py.File, outside: Path) -> None:
        f["actions"][step] = value

    return _copy(edit)


def _retype(name: str, dtype, value: Callable[[np.ndarray], np.ndarray]):
    def edit(f: h5py.File, outside: Path) -> None:
        old = f[name][()]
        del f[name]
        f.create_dataset(name, data=value(old), dtype=dtype)

    return _copy(edit)


def _as_group(name: str):
    def edit(f: h5py.File, outside: Path) -> None:
        del f[name]
        f.create_group(name)

    return _copy(edit)


def _infos_dataset(f: h5py.File, outside: Path) -> None:
    if "infos" in f:
        del f["infos"]
    f["infos"] = np.arange(f["timestamps"].shape[0])


def _narrow_actions(f: h5py.File, outside: Path) -> None:
    """A Discrete space of 300 actions with its actions stored as uint8 (0..255 only)."""
    f.attrs["action_space"] = json.dumps({"type": "Discrete", "n": 300, "start": 0})
    actions = f["actions"][()]
    del f["actions"]
    f["actions"] = actions.astype(np.uint8)


def _wide_frames(f: h5py.File, outside: Path) -> None:
    n = f["frames"].shape[0]
    del f["frames"]
    f.create_dataset("frames", data=np.zeros((n, 8, 8, 4), np.uint8))


def _keys_not_json(f: h5py.File, outside: Path) -> None:
    n = f["keys"].shape[0]
    del f["keys"]
    f.create_dataset("keys", data=np.array(["{{{"] * n, dtype=object), dtype=h5py.string_dtype())


def _no_pixels(f: h5py.File, outside: Path) -> None:
    n = f["frames"].shape[0]
    del f["frames"]
    f.create_dataset("frames", data=np.zeros((n, 0, 0, 3), np.uint8))


def _set_row(name: str, row: int, value: float):
    def edit(f: h5py.File, outside: Path) -> None:
        f[name][row] = value

    return _copy(edit)


def _endless_heap(bad: Path, good: Path, outside: Path) -> None:
    """The first object of the first global heap collection (where the attributes' text
    lives) becomes free space of size 0: HDF5 then reads that collection forever."""
    data = bytearray(good.read_bytes())
    first = data.find(b"GCOL") + 16
    data[first : first + 2] = bytes(2)  # object index 0: free space
    data[first + 8 : first + 16] = bytes(8)  # of size 0
    bad.write_bytes(bytes(data))


def _attr_name_not_utf8(f: h5py.File, outside: Path) -> None:
    space = h5py.h5s.create(h5py.h5s.SCALAR)
    attr = h5py.h5a.create(f.id, b"\xff\xfe", h5py.h5t.NATIVE_INT64, space)
    attr.write(np.array(7, dtype=np.int64))


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def _deep_space() -> str:
    space: dict = {"type": "Discrete", "n": 3, "start": 0}
    for _ in range(200):
        space = {"type": "Dict", "spaces": {"a": space}}
    return json.dumps(space)


CASES: list[Case] = [
    # ---- reads outside the file -----------------------------------------------------------
    Case(
        "external link to another HDF5 file",
        "outside",
        _replace("rewards", lambda o: h5py.ExternalLink(str(o / "target.h5"), "/rewards")),
        "rewards",
    ),
    Case(
        "external link to /etc/passwd",
        "outside",
        _replace("rewards", lambda o: h5py.ExternalLink("/etc/passwd", "/rewards")),
        "rewards",
    ),
    Case(
        "external link to a FIFO",
        "outside",
        _replace("rewards", lambda o: h5py.ExternalLink(str(o / "pipe"), "/rewards")),
        "rewards",
    ),
    Case(
        "external link under a name the schema does not know",
        "outside",
        _copy(lambda f, o: f.__setitem__("extra", h5py.ExternalLink(str(o / "pipe"), "/x"))),
        "extra",
    ),
    Case("external link inside a group", "outside", _copy(_nested_external), "infos/evil"),
    Case(
        "dangling soft link",
        "outside",
        _replace("rewards", lambda o: h5py.SoftLink("/nowhere")),
        "rewards",
    ),
    Case("looping soft links", "outside", _copy(_soft_loop), None),
    Case(
        "soft link inside the file",
        "outside",
        _replace("rewards", lambda o: h5py.SoftLink("/timestamps")),
        "rewards",
    ),
    Case("raw data stored in another file", "outside", _copy(_external_storage), "rewards"),
    Case("a filter other than gzip (lzf)", "outside", _copy(_lzf_rewards), "rewards"),
    Case("virtual dataset over another file", "outside", _copy(_virtual), "rewards"),
    Case("hard-linked group cycle", "outside", _copy(_hard_cycle), None),
    # ---- memory bombs ---------------------------------------------------------------------
    Case("frames declared (10**9, H, W, 3)", "memory", _copy(_huge_frames), "frames"),
    Case("length 10**9 with every dataset that long", "memory", _copy(_huge_length), None),
    Case(
        "observation space of 10**9 values",
        "memory",
        _json_attr(
            "observation_space",
            {"type": "Box", "shape": [10**9], "dtype": "<f4", "low": -1.0, "high": 1.0},
        ),
        "observation_space",
    ),
    Case("actions declared (T, 10**7)", "memory", _copy(_huge_actions), "actions"),
    Case("info columns declared but not stored", "memory", _copy(_unstored_infos), None),
    Case("space nested 200 deep", "memory", _attr("action_space", _deep_space()), "action_space"),
    Case("notes of 20 MB", "memory", _attr("notes", json.dumps("n" * 20_000_000)), ""),
    # ---- type-malformed attributes --------------------------------------------------------
    Case("total_return as text", "attrs", _json_attr("total_return", "lots"), "total_return"),
    Case("total_return null", "attrs", _json_attr("total_return", None), "total_return"),
    Case("tags as an integer", "attrs", _json_attr("tags", 5), "tags"),
    Case("seed as text", "attrs", _json_attr("seed", "abc"), "seed"),
    Case("seed negative", "attrs", _json_attr("seed", -5), "seed"),
    Case("seed beyond 64 bits", "attrs", _json_attr("seed", 2**70), "seed"),
    Case("env_kwargs as a list", "attrs", _json_attr("env_kwargs", [1, 2]), "env_kwargs"),
    Case(
        "env_id naming a module to import",
        "attrs",
        _json_attr("env_id", "antigravity:Fly-v0"),
        "env_id",
    ),
    Case("JSON nested 100,000 deep", "attrs", _attr("env_kwargs", _deep(100_000)), "env_kwargs"),
    Case("length true", "attrs", _json_attr("length", True), "length"),
    Case("length 120.5", "attrs", _json_attr("length", 120.5), "length"),
    Case("terminated as text", "attrs", _json_attr("terminated", "yes"), "terminated"),
    Case("fps as text", "attrs", _json_attr("fps", "fast"), "fps"),
    Case("fps NaN", "attrs", _attr("fps", "NaN"), "fps"),
    Case("fps negative", "attrs", _json_attr("fps", -30), "fps"),
    Case("fps 1e308", "attrs", _json_attr("fps", 1e308), "fps"),
    Case("frameskip negative", "attrs", _json_attr("frameskip", -1), "frameskip"),
    Case("schema_version 0", "attrs", _json_attr("schema_version", 0), "schema_version"),
    Case("recorded_at not a time", "attrs", _json_attr("recorded_at", "soon"), "recorded_at"),
    Case("env_spec as text", "attrs", _json_attr("env_spec", "str"), "env_spec"),
    Case(
        "env_spec as EnvSpec JSON text in a string",
        "attrs",
        _json_attr("env_spec", json.dumps({"id": "x:Evil-v0", "entry_point": "os:system"})),
        "env_spec",
    ),
    Case(
        "Discrete action space of 10**12 choices",
        "memory",
        _json_attr("action_space", {"type": "Discrete", "n": 10**12, "start": 0}),
        "action_space",
    ),
    Case("action_meanings as an integer", "attrs", _json_attr("action_meanings", 3), None),
    Case("controller as an object", "attrs", _json_attr("controller", {}), "controller"),
    Case("schema_version as text", "attrs", _json_attr("schema_version", "1"), "schema_version"),
    Case("attribute not text", "attrs", _attr("player", np.int64(7)), "player"),
    Case("attribute name not UTF-8", "attrs", _copy(_attr_name_not_utf8), None),
    Case("attribute not UTF-8", "attrs", _attr("notes", np.bytes_(b'"\xff\xfe"')), "notes"),
    Case(
        "attribute an array",
        "attrs",
        _attr("tags", np.array(["a", "b"], dtype=h5py.string_dtype())),
        "tags",
    ),
    Case(
        "malformed space",
        "attrs",
        _json_attr("observation_space", {"type": "Box", "shape": "abc"}),
        "observation_space",
    ),
    # ---- out-of-range data ----------------------------------------------------------------
    Case("action above the action space", "data", _set_action(5, 7), "actions"),
    Case("action below the action space", "data", _set_action(0, -1), "actions"),
    Case("actions as floats", "data", _retype("actions", "f8", lambda a: a + 0.5), "actions"),
    Case(
        "rewards as text",
        "data",
        _retype("rewards", h5py.string_dtype(), lambda a: a.astype(str).astype(object)),
        "rewards",
    ),
    Case(
        "observations as text",
        "data",
        _retype(
            "observations",
            h5py.string_dtype(),
            lambda a: np.array([str(r) for r in a], dtype=object),
        ),
        "observations",
    ),
    Case("frames with 4 channels", "data", _copy(_wide_frames), "frames"),
    Case("frames of no pixels", "data", _copy(_no_pixels), "frames"),
    Case(
        "rewards of shape (T, 2)",
        "data",
        _retype("rewards", "f8", lambda a: np.c_[a, a]),
        "rewards",
    ),
    Case("a NaN reward", "data", _set_row("rewards", 5, np.nan), "rewards"),
    Case("a NaN observation", "data", _set_row("observations", 5, np.nan), "observations"),
    Case("an infinite timestamp", "data", _set_row("timestamps", 5, np.inf), "timestamps"),
    Case("keys not JSON", "data", _copy(_keys_not_json), "keys"),
    Case("keys a group", "data", _as_group("keys"), "keys"),
    Case("rewards an empty group", "data", _as_group("rewards"), "rewards"),
    Case("infos a dataset", "data", _copy(_infos_dataset), "infos"),
    Case("rewards as whole numbers", "data", _retype("rewards", "i1", lambda a: a), "rewards"),
    Case("actions too narrow for the space", "data", _copy(_narrow_actions), "actions"),
    # ---- damaged metadata -------------------------------------------------------------------
    Case("global heap HDF5 reads forever", "metadata", _endless_heap, ""),
]
FLIP_CLASS = "metadata byte flips"
CLASSES = [c.name for c in CASES] + [FLIP_CLASS]
"""Every class of hostile file, by name (``len(CLASSES)`` of them; test_bad_input.py has the
file-level ones: truncated, random bytes, another tool's HDF5, newer schema...)."""


def metadata_ranges(path: Path) -> list[tuple[int, int]]:
    """The byte ranges of ``path`` that hold no raw dataset data (superblock, object headers,
    B-trees, heaps, attributes)."""
    raw: list[tuple[int, int]] = []
    with h5py.File(path, "r") as f:

        def visit(name: str, obj) -> None:
            if not isinstance(obj, h5py.Dataset):
                return
            if obj.chunks is None:
                offset = obj.id.get_offset()
                if offset is not None:
                    raw.append((offset, offset + obj.id.get_storage_size()))
                return
            for i in range(obj.id.get_num_chunks()):
                info = obj.id.get_chunk_info(i)
                raw.append((info.byte_offset, info.byte_offset + info.size))

        f.visititems(visit)
    out, pos = [], 0
    for start, end in sorted(raw):
        if start > pos:
            out.append((pos, start))
        pos = max(pos, end)
    size = path.stat().st_size
    if pos < size:
        out.append((pos, size))
    return out


def flip_bytes(bad: Path, good: Path, seed: int, flips: int = 6) -> None:
    shutil.copy(good, bad)
    ranges = metadata_ranges(good)
    rng = np.random.default_rng(seed)
    lengths = np.array([e - s for s, e in ranges], dtype=np.float64)
    data = bytearray(bad.read_bytes())
    for _ in range(flips):
        start, end = ranges[rng.choice(len(ranges), p=lengths / lengths.sum())]
        pos = int(rng.integers(start, end))
        data[pos] ^= int(rng.integers(1, 256))
    bad.write_bytes(bytes(data))


@pytest.fixture(scope="module")
def good_episodes(tmp_path_factory) -> list[Path]:
    from demostudio.cli.record_cmd import RecordConfig, record

    out = tmp_path_factory.mktemp("good")
    return record(RecordConfig(env="MountainCar-v0", episodes=2, out=out, seed=1), progress=False)


class Built(NamedTuple):
    name: str
    klass: str
    field: str | None
    flip: bool
    folder: Path
    bad: Path


class HostileRun(NamedTuple):
    built: list[Built]
    results: dict[tuple[str, str], dict]
    """(case name, command) -> the driver's row."""
    opened: str | None
    """strace's log of every file opened (None without strace)."""
    outside: Path
    """The folder of the targets outside the episode files (a FIFO, another episode)."""


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory, good_episodes):
    """Builds every case (a folder: the good episodes and one bad file) and runs the driver
    over all of them once; returns (built cases, results by (case, command), opened files)."""
    root = tmp_path_factory.mktemp("hostile")
    outside = root / "outside"
    outside.mkdir()
    os.mkfifo(outside / "pipe")
    shutil.copy(good_episodes[1], outside / "target.h5")
    built: list[Built] = []

    def folder_with(name: str) -> tuple[Path, Path]:
        folder = root / re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
        folder.mkdir()
        for p in good_episodes:
            shutil.copy(p, folder / p.name)
        return folder, folder / "zz-bad.h5"

    for case in CASES:
        folder, bad = folder_with(case.name)
        case.make(bad, good_episodes[0], outside)
        built.append(Built(case.name, case.name, case.field, False, folder, bad))
    for seed in FLIP_SEEDS:
        folder, bad = folder_with(f"flip {seed}")
        flip_bytes(bad, good_episodes[0], seed)
        built.append(Built(f"flip {seed}", FLIP_CLASS, None, True, folder, bad))

    commands = [
        {"case": b.name, "argv": argv}
        for b in built
        for argv in (
            ["validate", str(b.bad)],
            ["info", str(b.bad)],
            ["verify", "-q", str(b.bad)],
            ["ls", str(b.folder)],
            ["train-load", str(b.folder)],
        )
    ]
    commands_file = root / "commands.json"
    commands_file.write_text(json.dumps(commands))
    results_file = root / "results.jsonl"
    trace_file = root / "opened.txt"
    env = {**os.environ, "MALLOC_ARENA_MAX": "2", "OPENBLAS_NUM_THREADS": "1"}
    strace = shutil.which("strace")
    results: dict[tuple[str, str], dict] = {}
    first = 0
    while first < len(commands):  # a command that hangs or dies ends the driver: go on after it
        cmd = [sys.executable, str(DRIVER), str(commands_file), str(results_file), str(first)]
        if strace:
            trace = ["--seccomp-bpf", "-f", "-qq", "-e", "trace=open,openat"]
            trace += ["-o", f"{trace_file}.{first}"]
            cmd = [strace, *trace, *cmd]
        subprocess.run(cmd, env=env, timeout=900, check=False, capture_output=True)
        last = first - 1
        for line in results_file.read_text().splitlines():
            row = json.loads(line)
            results[(row["case"], row["argv"][0])] = row
            last = max(last, row["index"])
        first = last + 1
    traces = sorted(root.glob("opened.txt.*"))
    opened = "".join(t.read_text() for t in traces) if traces else None
    return HostileRun(built, results, opened, outside)


def _problems(b: Built, results: dict) -> list[str]:
    """What is wrong with the commands' answers to one built case (empty: all good)."""
    bad = str(b.bad)
    problems = []
    for cmd in ("validate", "info", "verify", "ls", "train-load"):
        row = results.get((b.name, cmd))
        if row is None:
            problems.append(f"{cmd}: never ran")
            continue
        if row.get("start"):
            problems.append(f"{cmd}: hung or was killed (no result)")
            continue
        text = row["stdout"] + row["stderr"]
        if row["escaped"] or "Traceback" in text:
            last = (row["escaped"] or text).strip().splitlines()[-1]
            problems.append(f"{cmd}: traceback ({last})")
            continue
        if row["peak_mb"] > PEAK_MB:
            problems.append(f"{cmd}: peak memory {row['peak_mb']:.0f} MB")
        errors = [line for line in row["stderr"].splitlines() if line.strip()]
        field = (
            r"\[[^\]]+\]" if b.field is None else (rf"\[{re.escape(b.field)}\]" if b.field else "")
        )
        if cmd == "ls":
            out = row["stdout"]
            rows = [line for line in out.splitlines() if line.startswith(str(b.folder))]
            good_rows = [r for r in rows if "MountainCar-v0" in r and bad not in r]
            if row["rc"] != 0 or len(good_rows) != 2:
                problems.append(f"{cmd}: the good files do not list (rc {row['rc']})")
            bad_rows = [r for r in rows if r.startswith(bad)]
            if not b.flip and not (
                len(bad_rows) == 1 and "BAD FILE" in bad_rows[0] and re.search(field, bad_rows[0])
            ):
                problems.append(f"{cmd}: the bad file is not flagged with its field: {bad_rows}")
            continue
        if cmd == "train-load":
            loaded = [line for line in row["stdout"].splitlines() if line.startswith("loaded")]
            if sum(bad not in line for line in loaded) != 2:
                problems.append(f"{cmd}: the good files do not load")
            if b.flip and not errors:
                continue
        if cmd == "validate":
            lines = [line for line in row["stdout"].splitlines() if line.startswith("INVALID")]
            if b.flip and row["rc"] == 0:
                continue
            if row["rc"] != 1 or len(lines) != 1 or bad not in lines[0]:
                problems.append(f"{cmd}: expected one INVALID line naming the file: {row}")
            elif not b.flip and not re.search(field, lines[0]):
                problems.append(f"{cmd}: no field {b.field or ''} named: {lines[0]}")
            continue
        if b.flip and row["rc"] in (0, 1) and not errors:
            continue  # the flips missed what this command reads (or verify found it differs)
        if row["rc"] in (0, None) or len(errors) != 1 or bad not in errors[0]:
            problems.append(f"{cmd}: expected one error line naming the file: {row}")
        elif not b.flip and not re.search(field, errors[0]):
            problems.append(f"{cmd}: no field {b.field or ''} named: {errors[0]}")
    return problems


def test_every_hostile_class_fails_cleanly(hostile_run):
    failing: dict[str, list[str]] = {}
    for b in hostile_run.built:
        problems = _problems(b, hostile_run.results)
        if problems:
            failing.setdefault(b.klass, []).extend(f"{b.name}: {p}" for p in problems)
    report = "\n".join(f"{k}:\n  " + "\n  ".join(v) for k, v in failing.items())
    print(f"{len(CLASSES) - len(failing)} of {len(CLASSES)} classes pass")
    assert not failing, f"{len(failing)} of {len(CLASSES)} classes fail:\n{report}"


def test_nothing_outside_the_file_is_opened(hostile_run):
    if hostile_run.opened is None:
        pytest.skip("strace is not installed")
    outside = hostile_run.outside
    targets = [str(outside / "target.h5"), str(outside / "pipe"), "/etc/passwd"]
    lines = hostile_run.opened.splitlines()
    assert any("zz-bad.h5" in line for line in lines)  # the trace does see the files opened
    hits = [line for line in lines if any(f'"{t}"' in line for t in targets)]
    assert not hits, "\n".join(hits[:10])


def test_commands_are_fast_and_bounded(hostile_run):
    rows = [r for r in hostile_run.results.values() if not r.get("start")]
    assert rows and max(r["peak_mb"] for r in rows) < PEAK_MB
    assert max(r["seconds"] for r in rows) < 10


def test_flips_really_hit_the_metadata(good_episodes, tmp_path):
    ranges = metadata_ranges(good_episodes[0])
    size = good_episodes[0].stat().st_size
    meta = sum(e - s for s, e in ranges)
    assert 0 < meta < size and ranges[0][0] == 0  # the superblock is metadata
    bad = tmp_path / "flip.h5"
    flip_bytes(bad, good_episodes[0], 0)
    diff = np.frombuffer(bad.read_bytes(), np.uint8) != np.frombuffer(
        good_episodes[0].read_bytes(), np.uint8
    )
    where = np.flatnonzero(diff)
    assert 1 <= len(where) <= 6
    assert all(any(s <= w < e for s, e in ranges) for w in where)
    assert math.isfinite(meta)


TRAIN_CLASSES = (
    "external link to a FIFO",
    "length 10**9 with every dataset that long",
    "action above the action space",
)
_TRAIN_SCRIPT = """
import json, sys
from demostudio.cli import main
for folder, run_dir in json.loads(sys.argv[1]):
    rc = main(["train", "bc", "--env", "MountainCar-v0", "--demos", folder,
               "--run-dir", run_dir, "--max-updates", "1", "--no-progress",
               "--no-tensorboard"])
    print(json.dumps({"folder": folder, "rc": rc}), flush=True)
"""


def test_train_reports_hostile_demos_cleanly(hostile_run, tmp_path):
    """``demostudio train bc --demos FOLDER`` (through agents/core/demos.py): one clean line
    naming the bad file and its field, exit 2, no traceback, no hang, memory bounded."""
    import resource

    chosen = [b for b in hostile_run.built if b.name in TRAIN_CLASSES]
    assert len(chosen) == len(TRAIN_CLASSES)
    jobs = [(str(b.folder), str(tmp_path / f"run{i}")) for i, b in enumerate(chosen)]
    proc = subprocess.run(
        [sys.executable, "-c", _TRAIN_SCRIPT, json.dumps(jobs)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    rcs = [json.loads(line)["rc"] for line in proc.stdout.splitlines() if line.startswith("{")]
    assert rcs == [2] * len(chosen), proc.stdout + proc.stderr[-2000:]
    errors = [line for line in proc.stderr.splitlines() if line.startswith("demostudio: error:")]
    assert len(errors) == len(chosen)
    for b, line in zip(chosen, errors):
        assert str(b.bad) in line and re.search(r"\[[^\]]+\]", line), line
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    assert peak_mb < 1536


def test_a_gzip_bomb_frame_is_refused_without_inflating_it(good_episodes, tmp_path):
    """A frame chunk whose deflate stream inflates to 256 MB (for a 720 KB frame) is
    refused after inflating one frame's worth: the reader bounds every row it inflates."""
    import zlib

    from demostudio.episode import EpisodeError, open_episode

    bad = tmp_path / "bomb.h5"
    shutil.copy(good_episodes[0], bad)
    bomb = zlib.compress(bytes(256 * 1024 * 1024), 9)
    with h5py.File(bad, "r+") as f:
        zeros = (0,) * (f["frames"].ndim - 1)
        f["frames"].id.write_direct_chunk((0, *zeros), bomb)
    with open_episode(bad) as ep:
        assert ep.frame(1).shape == ep.frame_shape  # the other frames still read
        with pytest.raises(EpisodeError) as err:
            ep.frame(0)
    assert err.value.field == "frames" and "row 0" in str(err.value)


_RSS_SCRIPT = """
import re, sys
from demostudio.episode import EpisodeError, open_episode
def peak_kb():  # this process's own peak (ru_maxrss starts from the forking parent's)
    with open("/proc/self/status") as status:
        return int(re.search(r"VmHWM:\\s+(\\d+)", status.read()).group(1))
before = peak_kb()
try:
    open_episode(sys.argv[1]).close()
except EpisodeError as exc:
    print(exc)
print((peak_kb() - before) // 1024)
"""


@pytest.mark.parametrize("fixed", [False, True], ids=["variable-length", "fixed-length"])
def test_a_huge_text_attribute_is_refused_before_it_is_read(good_episodes, tmp_path, fixed):
    """A 50 MB ``notes`` is refused before HDF5 reads it: HDF5 reads a variable-length text
    whole (with copies: 263 MB more for this one) to learn its size, so the file's global heap
    is looked at first; attributes in dense storage (a fixed-length text over 64 KB) are
    loaded whole when listed (144 MB), so the size of that storage is looked at first."""
    bad = tmp_path / "notes.h5"
    text = json.dumps("n" * 50_000_000)
    with h5py.File(good_episodes[0]) as good, h5py.File(bad, "w", libver="latest") as f:
        for name in good:  # a new file, so attributes over 64 KB go to dense storage
            good.copy(good[name], f, name)
        f.attrs.update(good.attrs)
        f.attrs["notes"] = np.bytes_(text.encode()) if fixed else text
    proc = subprocess.run(
        [sys.executable, "-c", _RSS_SCRIPT, str(bad)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    message, grown_mb = proc.stdout.strip().splitlines()
    assert int(grown_mb) < 16, f"{grown_mb} MB"  # the heap scan reads 1 MB chunks, not the
    # whole file (mapped whole, the scan touched all 50 MB of it)
    assert message.startswith(f"{bad}: ") and "16777216" in message, message  # no field: the
    # size is known before any attribute is opened, not which attribute has it


def _collection(objects: list[tuple[int, int]], total: int | None = None) -> bytes:
    """A global heap collection (signature, version 1, size) of ``(index, length)`` object
    headers, each followed by its (zero) data padded to 8 bytes."""
    body = b""
    for i, n in objects:  # a huge object's data is left to the file's (sparse) tail
        body += i.to_bytes(2, "little") + bytes(6) + n.to_bytes(8, "little")
        body += bytes((n + 7) // 8 * 8) if n <= 64 else b""
    size = total if total is not None else 16 + len(body)
    return b"GCOL\x01\x00\x00\x00" + size.to_bytes(8, "little") + body


@pytest.mark.parametrize("straddle", range(0, 24, 3))
def test_the_heap_scan_reads_in_chunks_with_the_same_verdicts(tmp_path, monkeypatch, straddle):
    """The global heap scan holds a bounded chunk of the file, not all of it: a collection
    whose signature or object headers straddle a chunk boundary gets the verdict of a whole-file
    scan (a huge object refused, an endless collection refused, a fine one passed)."""
    from demostudio.episode import hostile

    chunk = 4096
    huge = hostile.MAX_HEAP_OBJECT_BYTES + 1
    fine = _collection([(1, 10), (2, 20)])
    files = {
        "fine": fine,
        "huge": _collection([(1, 10), (2, huge)], total=16 + 32 + 16 + huge),
        "endless": _collection([(1, 10), (0, 0)], total=64),
    }
    verdicts = {}
    for name, heap in files.items():
        path = tmp_path / f"{name}.bin"
        pad = bytes(3 * chunk - len(fine) - 2 - straddle)  # the heap starts 2 + straddle bytes
        # before a chunk boundary: its signature, size or object headers straddle it
        tail = huge + 64 if name == "huge" else 2 * chunk
        with open(path, "wb") as f:
            f.write(fine + pad + heap)
            f.truncate(len(fine) + len(pad) + len(heap) + tail)  # sparse
        monkeypatch.setattr(hostile, "SCAN_CHUNK_BYTES", chunk)
        chunked = hostile.global_heap_problem(path)
        monkeypatch.setattr(hostile, "SCAN_CHUNK_BYTES", path.stat().st_size)  # all at once
        verdicts[name] = chunked
        assert chunked == hostile.global_heap_problem(path), name
    assert verdicts["fine"] is None
    assert f"got one of {huge} bytes" in verdicts["huge"]
    assert "is damaged" in verdicts["endless"]

"""No command imports or calls code an episode file (or a Minari dataset) names.

An episode's ``env_spec`` is a record of the env it was made in: its ``entry_point``,
``vector_entry_point`` and ``additional_wrappers`` name code that ``gymnasium.make`` would
import and call. Here two files name hostile code, a shell command through ``os:system`` and
modules of a package on ``sys.path`` that leave a marker when imported or called, and every
command that reads episode files runs over them (in this process, through the CLI's
``main``; the replay viewer's verification runs in a child process, which the markers on disk
cover). Nothing may leave a marker or land in ``sys.modules``; ``validate`` names each field.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import h5py
import pygame
import pytest

from demostudio.cli import main

HOSTILE_MODULES = ("ds_hostile_env", "ds_hostile_wrap", "ds_hostile_vec")
MODULE_SOURCE = """from pathlib import Path
Path({marker!r}, __name__ + ".imported").touch()


def Env(*args, **kwargs):
    Path({marker!r}, __name__ + ".called").touch()
    raise SystemExit("hostile code ran")


Wrap = Vec = Env
"""
TINY_R2D3 = (
    "--num-actors 1 --hidden 8 --lstm 8 --burn-in 2 --trace 4 --period 2 --batch-size 4 "
    "--min-replay 4 --env-steps-per-update 8 --eval-episodes 1 --eval-every 0 "
    "--total-env-steps 16 --no-progress --no-tensorboard --device cpu"
)
TINY_COMPARE = (
    "--algos bc --seeds 1 --budget 16 --eval-every 0 --eval-episodes 1 --final-eval-episodes 1 "
    '--jobs 1 --overrides {"bc":{"max_updates":3,"batch_size":4,"hidden":8,"lstm":8}}'
)
COMMANDS = [  # (command line, exit statuses it may end with); {a} {b}: the hostile files
    ("info {a}", {0}),
    ("info {b}", {0}),
    ("ls {demos}", {0}),
    ("verify -q {demos}", {2}),
    ("export {a} --format mp4 --out {out}/a.mp4 --no-progress", {0}),
    ("export {b} --format gif --out {out}/b.gif --no-progress", {0}),
    ("export {a} --format png --out {out}/png --no-progress", {0}),
    ("export {demos} --format minari --dataset-id hostile/ex-v0 --out {out}/m --no-progress", {2}),
    ("import {dataset0} --out {out}/imported", {2}),
    ("import {dataset1} --out {out}/imported", {2}),
    ("import {dataset2} --out {out}/imported", {2}),
    ("merge {demos} --out {out}/merged", {0}),
    ("split {demos} --out {out}/split --validation 0.5", {0}),
    ("trim {b} --start 1 --out {out}/trimmed.h5", {0}),
    ("quality --verify --no-progress {demos}", {0, 1}),
    (f"train r2d3 --env CartPole-v1 --demos {{demos}} --run-dir {{out}}/run {TINY_R2D3}", {0}),
    (f"compare --env CartPole-v1 --demos {{demos}} --out {{out}}/compare {TINY_COMPARE}", {0}),
]


def _set_spec(path: Path, **changes) -> None:
    with h5py.File(path, "a") as f:
        spec = json.loads(f.attrs["env_spec"])
        spec.update(changes)
        f.attrs["env_spec"] = json.dumps(spec)


def _hostile_dataset(clean: Path, target: Path, edit) -> Path:
    shutil.copytree(clean, target)
    edit(target / "data")
    return target


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """Two hostile episodes in ``demos/CartPole-v1`` (``a`` runs ``touch`` through os:system,
    ``b`` names modules of the hostile package for all three code fields), Minari datasets
    whose specs name the same code, and the folder the markers would land in."""
    from demostudio.cli.record_cmd import RecordConfig, record
    from demostudio.interop.minari import export_minari

    root = tmp_path_factory.mktemp("hostile")
    marker = root / "markers"
    marker.mkdir()
    package = root / "package"
    package.mkdir()
    for name in HOSTILE_MODULES:
        (package / f"{name}.py").write_text(MODULE_SOURCE.format(marker=str(marker)))
    cfg = RecordConfig(env="CartPole-v1", episodes=1, out=root / "clean", seed=0, policy="random")
    (source,) = record(cfg, progress=False)
    clean_dataset = export_minari([source], "clean/cartpole-v0", out=root / "minari")
    demos = root / "demos" / "CartPole-v1"
    demos.mkdir(parents=True)
    a, b = demos / "a.h5", demos / "b.h5"
    shutil.copy(source, a)
    _set_spec(a, entry_point="os:system", kwargs={"command": f"touch {marker}/os-system"})
    shutil.copy(source, b)
    _set_spec(
        b,
        entry_point="ds_hostile_env:Env",
        vector_entry_point="ds_hostile_vec:Vec",
        additional_wrappers=[{"name": "W", "entry_point": "ds_hostile_wrap:Wrap", "kwargs": {}}],
    )
    hostile_spec = json.dumps(
        {
            "id": "CartPole-v1",
            "entry_point": "ds_hostile_env:Env",
            "kwargs": {},
            "additional_wrappers": [
                {"name": "W", "entry_point": "ds_hostile_wrap:Wrap", "kwargs": {}}
            ],
            "vector_entry_point": "ds_hostile_vec:Vec",
        }
    )

    def spec_without_spaces(data: Path) -> None:  # Minari would make the env to get them
        meta = json.loads((data / "metadata.json").read_text())
        meta["env_spec"] = hostile_spec
        del meta["observation_space"]
        (data / "metadata.json").write_text(json.dumps(meta))

    def spec_with_spaces(data: Path) -> None:
        meta = json.loads((data / "metadata.json").read_text())
        meta["env_spec"] = hostile_spec
        (data / "metadata.json").write_text(json.dumps(meta))

    def episode_attrs(data: Path) -> None:  # the attributes a DemoStudio export embeds
        with h5py.File(data / "main_data.hdf5", "a") as f:
            attrs = json.loads(f["episode_0"].attrs["demostudio"])
            attrs["env_spec"]["entry_point"] = "ds_hostile_env:Env"
            f["episode_0"].attrs["demostudio"] = json.dumps(attrs)

    datasets = [
        _hostile_dataset(clean_dataset, root / "minari" / f"hostile/{name}-v0", edit)
        for name, edit in (
            ("nospaces", spec_without_spaces),
            ("spec", spec_with_spaces),
            ("attrs", episode_attrs),
        )
    ]
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(package))  # importable here and in the viewer's child
        mp.setenv("PYTHONPATH", os.pathsep.join([str(package), os.environ.get("PYTHONPATH", "")]))
        yield {"root": root, "marker": marker, "demos": demos, "a": a, "b": b, "datasets": datasets}


def _nothing_ran(world) -> None:
    assert sorted(p.name for p in world["marker"].iterdir()) == []
    assert [m for m in HOSTILE_MODULES if m in sys.modules] == []


def _run(argv: list[str], capsys) -> tuple[int, str]:
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return code, out.out + out.err


def test_the_hostile_modules_would_leave_markers(world):
    """The markers work: importing a hostile module (in a child, so this one stays clean)
    leaves one, so their absence below means nothing imported them."""
    import subprocess

    subprocess.run([sys.executable, "-c", "import ds_hostile_env"], check=True, env=os.environ)
    assert (world["marker"] / "ds_hostile_env.imported").exists()
    (world["marker"] / "ds_hostile_env.imported").unlink()


def test_validate_names_every_field_that_names_other_code(world, capsys):
    code, text = _run(["validate", world["demos"]], capsys)
    assert code == 1
    lines = text.splitlines()
    a = [line for line in lines if "a.h5" in line]
    b = [line for line in lines if "b.h5" in line]
    assert len(a) == 1 and "[env_spec.entry_point]" in a[0] and '"os:system"' in a[0]
    assert "gymnasium.envs.classic_control.cartpole:CartPoleEnv" in a[0]  # what was expected
    for field in ("entry_point", "vector_entry_point", "additional_wrappers"):
        assert any(f"[env_spec.{field}]" in line for line in b), field
    assert "0 valid, 2 invalid" in text
    _nothing_ran(world)


@pytest.mark.parametrize("line, codes", COMMANDS, ids=[line for line, _ in COMMANDS])
def test_no_command_runs_code_a_file_names(world, line, codes, capsys, tmp_path):
    names = {
        "a": world["a"],
        "b": world["b"],
        "demos": world["demos"],
        "out": tmp_path,
        **{f"dataset{i}": d for i, d in enumerate(world["datasets"])},
    }
    argv = line.split()
    for key, value in names.items():
        argv = [a.replace(f"{{{key}}}", str(value)) for a in argv]
    code, text = _run(argv, capsys)
    assert code in codes, text
    if code == 2:  # a refusal names the field that names other code
        assert "env_spec.entry_point" in text or "[observation_space]" in text, text
    _nothing_ran(world)


def test_import_refuses_a_dataset_minari_would_make_an_env_for(world, capsys):
    """Without the spaces in metadata.json Minari makes the env its env_spec names to read
    them off: refused before Minari opens the dataset."""
    code, text = _run(["import", world["datasets"][0], "--out", world["root"] / "i"], capsys)
    assert code == 2
    assert "[observation_space]: expected the serialized space" in text
    code, text = _run(["import", world["datasets"][2], "--out", world["root"] / "i"], capsys)
    assert code == 2 and "episode_0/demostudio/env_spec.entry_point" in text
    _nothing_ran(world)


def test_replay_verifies_without_running_code_a_file_names(world, monkeypatch):
    """The viewer's V verifies in a child process: refused there, named in the window."""
    from demostudio.replay import viewer as viewer_module

    real_pump = viewer_module.Viewer.pump
    seen: list[str] = []
    deadline = time.monotonic() + 60

    def pump(self):
        if not seen:
            pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_v, mod=0))
        message = self.message[0] if self.message else ""
        seen.append(message)
        if "failed" in message or self.verify_results or time.monotonic() > deadline:
            pygame.event.post(pygame.event.Event(pygame.QUIT))
        real_pump(self)

    monkeypatch.setattr(viewer_module.Viewer, "pump", pump)
    assert main(["replay", str(world["b"])]) == 0
    assert "verify failed" in seen[-1] and "env_spec.entry_point" in seen[-1], seen[-1]
    _nothing_ran(world)

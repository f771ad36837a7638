"""Every command, driven with bad arguments (missing files, bad env ids, bad values), exits
non-zero with one clean error line and no traceback. The command list comes from the parser,
so a new command is covered by the generated cases (a missing file for each positional, a
bad value for each number or choice) before anyone writes cases for it."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from demostudio.cli import build_parser, main
from demostudio.cli.dataclass_args import SEED_FIELDS
from demostudio.episode.schema import MAX_GIVEN_SEED as MAX_SEED_FLAG

MISSING = "/nonexistent-demostudio/missing.h5"
BAD_ENV = "CartPol-v1"


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


COMMANDS = _commands()


def _generated(name: str, parser: argparse.ArgumentParser) -> list[list[str]]:
    """From the parser: each positional given a missing file (or a bad env / algorithm
    name), and each number or choice option given a value of the wrong kind."""
    cases = []
    for action in parser._actions:
        if action.dest == "help" or action.nargs == argparse.REMAINDER:
            continue
        if not action.option_strings:
            value = {"env": BAD_ENV, "algo": "nosuchalgo", "pattern": "zzz-no-such-env"}.get(
                action.dest, MISSING
            )
            cases.append([name, value])
        elif action.choices:
            cases.append([name, action.option_strings[0], "no-such-choice"])
        elif getattr(action.type, "__name__", "") in ("int", "float"):
            cases.append([name, action.option_strings[0], "not-a-number"])
            if action.type.__name__ == "float":
                cases.append([name, action.option_strings[0], "nan"])
    return cases


# Bad values that get past the parser into the commands. {tmp} is a scratch folder,
# {garbage} a file that is not HDF5, {demo} a shipped demo episode.
EXPLICIT: dict[str, list[str]] = {
    "ls": [f"ls {MISSING}"],
    "info": ["info {garbage}", "info {tmp}"],
    "validate": ["validate {garbage}"],
    "verify": ["verify {garbage}"],
    "recover": [f"recover {MISSING}"],
    "compact": [f"compact {MISSING}"],
    "tag": [f"tag {MISSING} --add good"],
    "record": [
        "record Acrobot-v1 --out {tmp}",
        f"record {BAD_ENV} --out {{tmp}}",
        "record CartPole-v1 --episodes 0 --out {tmp}",
    ],
    "play": [
        f"play {BAD_ENV} --out {{tmp}}",
        "play CartPole-v1 --fps 0 --out {tmp}",
        "play CartPole-v1 --env-kwargs [1] --out {tmp}",
        f"play CartPole-v1 --keymap {MISSING} --out {{tmp}}",
    ],
    "keymap": [f"keymap {BAD_ENV}", f"keymap CartPole-v1 --keymap {MISSING}"],
    "replay": [f"replay {MISSING}", "replay {tmp}/empty"],
    "export": [
        "export {demo} --scale 0 --no-progress",
        "export {demo} --end 100000 --no-progress",
        "export {demo} --format minari",
        "export {garbage} --no-progress",
    ],
    "train": [
        "train nosuchalgo",
        f"train r2d2 --env {BAD_ENV} --run-dir {{tmp}}/run --total-env-steps 50",
        f"train r2d3 --env CartPole-v1 --demos {MISSING} --run-dir {{tmp}}/run",
        'train r2d2 --env CartPole-v1 --env-kwargs {{"render_mode":"human"}} '
        "--run-dir {tmp}/run --total-env-steps 50",
        "train reactor --env CartPole-v1 --learning-rate inf --run-dir {tmp}/run",
    ],
    "coach": [
        "coach nosuchalgo",
        "coach bc --env CartPole-v1 --run-dir {tmp}/run",
        f"coach r2d3 --env {BAD_ENV} --run-dir {{tmp}}/run",
        "coach r2d3 --env CartPole-v1 --fps 0 --run-dir {tmp}/run",
        f"coach r2d3 --env CartPole-v1 --demos {MISSING} --run-dir {{tmp}}/run",
    ],
    "evaluate": [f"evaluate {MISSING}", "evaluate {garbage}"],
    "watch": [f"watch {MISSING} --headless --record {{tmp}}"],
    "plot": ["plot", f"plot {MISSING}"],
    "compare": [
        f"compare --env {BAD_ENV} --budget 50 --out {{tmp}}/c1",
        "compare --algos nosuchalgo --budget 50 --out {tmp}/c2",
        f"compare --demos {MISSING} --budget 50 --out {{tmp}}/c3",
    ],
    "import": ["import nobody/no-such-dataset-v0 --out {tmp}"],
    "merge": [f"merge {MISSING} --out {{tmp}}/m"],
    "split": ["split {demo} --out {tmp}/s --validation 2"],
    "envs": ["envs zzz-no-such-env"],
    # Commands of other helpers' branches (an unknown command is a clean parser error too).
    "trim": [f"trim {MISSING}", "trim {demo} --start 400 --end 100 --out {tmp}/t.h5"],
    "quality": [f"quality {MISSING}"],
}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bad-args")
    garbage = tmp / "garbage.h5"
    garbage.write_bytes(b"this is not an HDF5 file\n" * 10)
    demo = sorted((Path(__file__).parent.parent / "demos" / "CartPole-v1").glob("*.h5"))[0]
    return tmp, garbage, demo


def _cases() -> list[list[str]]:
    return [
        _param(case, " ".join(case))
        for name, parser in COMMANDS.items()
        for case in _generated(name, parser)
    ]


def _param(value, text: str):
    return pytest.param(value, id=text)


# Commands that report on many files: a bad file is a line of the report (stdout), and the
# exit status says that something was wrong.
REPORT_COMMANDS = ("validate",)


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse
        code = exc.code if isinstance(exc.code, int) else 1
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _assert_clean(argv: list[str], code: int, out: str, err: str) -> None:
    assert code != 0, f"{argv}: expected a non-zero exit, got {code}"
    assert "Traceback" not in out + err, f"{argv}: {out}{err}"
    if argv[0] in REPORT_COMMANDS and "expected" in out:
        return
    lines = [line for line in err.splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower()]
    assert len(errors) == 1, f"{argv}: expected one error line, got {errors}"
    assert lines[-1].startswith("demostudio") and "error:" in lines[-1], f"{argv}: {lines}"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("argv", _cases())
def test_generated_bad_arguments(argv, capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    _assert_clean(argv, *_run(argv, capsys))


def test_every_command_has_bad_value_cases():
    missing = [name for name in COMMANDS if name not in EXPLICIT and name != "launch"]
    assert not missing, f"add bad-value cases to EXPLICIT for the new commands {missing}"


def _explicit_cases():
    for cases in EXPLICIT.values():
        for case in cases:
            yield _param(case, case)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("case", list(_explicit_cases()))
def test_every_command_with_bad_values(case, inputs, capsys, monkeypatch):
    tmp, garbage, demo = inputs
    monkeypatch.chdir(tmp)
    (tmp / "empty").mkdir(exist_ok=True)
    argv = case.format(tmp=tmp, garbage=garbage, demo=demo).split()
    _assert_clean(argv, *_run(argv, capsys))


WINDOW_COMMANDS = (
    ["launch"],
    ["play", "CartPole-v1"],
    ["replay", "demos/CartPole-v1"],
    ["watch", "runs/any-run"],  # checked before the checkpoint is even read
    ["coach", "r2d3", "--env", "CartPole-v1"],  # checked before training starts
)


@pytest.mark.parametrize("argv", WINDOW_COMMANDS, ids=lambda a: a[0])
def test_window_commands_without_a_display_fail_fast(argv, tmp_path):
    """No DISPLAY, no WAYLAND_DISPLAY, no SDL_VIDEODRIVER: one line, exit 2, in seconds (SDL
    would otherwise pick its invisible offscreen driver and the window would open nowhere)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER")
    }
    env.update(XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"))
    if argv[0] == "play":
        argv = [*argv, "--out", str(tmp_path / "rec")]
    root = Path(__file__).parent.parent
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", "from demostudio.cli import main; raise SystemExit(main())", *argv],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    elapsed = time.monotonic() - started
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines == [lines[-1]] and "expected a display" in lines[-1], done.stderr
    # what runs without a display, never an invisible window waiting for keys
    assert "without a display" in lines[-1] and "SDL_VIDEODRIVER" not in lines[-1]
    assert elapsed < 10  # python + pygame start-up included; the check itself is < 1 s
    assert not (tmp_path / "rec").exists(), "play left a folder behind"
    assert not (tmp_path / "config").exists(), "a failed launch remembered settings"


def _seed_cases() -> list:
    """Every seed flag of every command (found in the parsers, the train configs' through
    ``train bc``), each given a negative seed and one past the bound."""
    flags = [
        [name, *action.option_strings[:1]]
        for name, parser in COMMANDS.items()
        for action in parser._actions
        if action.dest in SEED_FIELDS
    ]
    flags.append(["train", "bc", "--seed"])
    return [
        _param([*flag, value], " ".join([*flag, value]))
        for flag in flags
        for value in ("-1", str(MAX_SEED_FLAG + 1))
    ]


@pytest.mark.parametrize("argv", _seed_cases())
def test_seed_flags_take_seeds_every_consumer_accepts(argv, capsys, monkeypatch, tmp_path):
    """A negative seed (gymnasium and numpy refuse it) or one past 2**63-1 (the commands add
    offsets to it; an episode file, torch and Minari take at most 2**64-1) is refused by the
    parser, naming the flag and the range, before anything is made or written."""
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(argv, capsys)
    assert code == 2 and "Traceback" not in out + err, err
    lines = [line for line in err.splitlines() if "error" in line]
    flag, value = argv[-2], argv[-1]
    want = f"argument {flag}: expected a seed from 0 to {MAX_SEED_FLAG} (2**63-1), got '{value}'"
    assert len(lines) == 1 and lines[0].startswith("demostudio") and want in lines[0], err
    assert list(tmp_path.iterdir()) == []


def test_every_seeded_command_has_a_seed_case():
    commands = {case.values[0][0] for case in _seed_cases()}
    assert {"record", "play", "split", "evaluate", "watch", "train", "compare"} <= commands


ENV_KWARGS_REFUSED = (
    (["keymap", "CartPole-v1"], '{"bogus": 1}', "TypeError"),
    (["play", "CartPole-v1", "--out", "{tmp}/rec"], '{"max_episode_steps": -5}', "ValueError"),
    (["train", "bc", "--env", "CartPole-v1", "--demos", "{demos}", "--max-updates", "2",
      "--device", "cpu", "--run-dir", "{tmp}/run"], '{"bogus": 1}', "TypeError"),
    (["train", "r2d2", "--env", "CartPole-v1", "--total-env-steps", "50", "--device", "cpu",
      "--run-dir", "{tmp}/run"], '{"bogus": 1}', "TypeError"),
    (["coach", "r2d3", "--env", "CartPole-v1", "--run-dir", "{tmp}/run"], '{"bogus": 1}',
     "TypeError"),
)  # fmt: skip


@pytest.mark.timeout(120)
@pytest.mark.parametrize("argv, kwargs, raised", ENV_KWARGS_REFUSED, ids=lambda a: str(a)[:20])
def test_env_kwargs_the_env_refuses_are_one_line_naming_the_flag(
    argv, kwargs, raised, tmp_path, capsys, monkeypatch
):
    """``--env-kwargs`` the env's own code refuses (a name its constructor lacks, a value
    gymnasium rejects) was that code's traceback, exit 1; it is one line naming the flag and
    what the env said, exit 2, and nothing is left behind (no run folder, no recordings)."""
    monkeypatch.chdir(tmp_path)
    demos = Path(__file__).parent.parent / "demos" / "CartPole-v1"
    argv = [a.format(tmp=tmp_path, demos=demos) for a in argv] + ["--env-kwargs", kwargs]
    code, out, err = _run(argv, capsys)
    assert code == 2 and "Traceback" not in out + err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert lines[0].startswith(
        f"demostudio: error: --env-kwargs: expected arguments the env runs with, got {kwargs}: "
        f"it fails when it is made ({raised}: "
    ), lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == []

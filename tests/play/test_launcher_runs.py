"""The Train panel's reading side, without training: a run's status from its folder, the
progress and speed its metrics rows give, the estimate, the commands it builds, the demos it
would use, and the panel's pure event handling."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pygame
import pytest

from demostudio.assets import SAMPLE_DEMOS
from demostudio.episode.jsonfile import MAX_JSON_LINE_BYTES
from demostudio.episode.reader import update_metadata
from demostudio.launcher import commands, estimate
from demostudio.launcher.algorithms import AlgoInfo
from demostudio.launcher.demoset import read_demo_set
from demostudio.launcher.follow import MetricsFollower
from demostudio.launcher.processes import (
    ProcessNote,
    process_alive,
    read_process_note,
    write_process_note,
)
from demostudio.launcher.progress import Progress
from demostudio.launcher.runs import RunReader, run_folders
from demostudio.launcher.train_panel import (
    TrainAction,
    TrainFocus,
    TrainLayout,
    TrainState,
    process_event,
)

from .helpers import key_event


def info(name="r2d3", demos="required", clock="env_steps", pretrain=(), coachable=True):
    flag, budget = (
        ("--total-env-steps", 100_000) if clock == "env_steps" else ("--max-updates", 5_000)
    )
    return AlgoInfo(
        name,
        f"{name} summary",
        f"pick {name}",
        demos,
        clock,
        flag,
        budget,
        5_000,
        pretrain,
        True,
        coachable,
    )


def write_run(run_dir: Path, rows: list[dict], config: dict | None = None) -> Path:
    run_dir.mkdir(parents=True, exist_ok=True)
    cfg = {"algo": "r2d3", "env": "MountainCar-v0", "total_env_steps": 3000, "demos": []}
    (run_dir / "config.json").write_text(json.dumps({**cfg, **(config or {})}))
    (run_dir / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return run_dir


def final_checkpoint(run_dir: Path) -> Path:
    ckpt = run_dir / "checkpoints" / "final.pt"
    ckpt.parent.mkdir(exist_ok=True)
    ckpt.write_bytes(b"weights")
    later = time.time() + 1  # written after the last row, as the run shell does
    os.utime(ckpt, (later, later))
    return ckpt


TRAIN_ROWS = [
    {
        "kind": "train",
        "env_steps": 1000,
        "sps": 500.0,
        "ups": 10.0,
        "updates": 20,
        "episode_return": -200.0,
    },
    {"kind": "eval", "env_steps": 1000, "eval_return": -190.0, "updates": 20},
    {
        "kind": "train",
        "env_steps": 2000,
        "sps": 100.0,
        "ups": 50.0,
        "updates": 520,
        "episode_return": -180.0,
    },
    {"kind": "eval", "env_steps": 2000, "eval_return": -150.0, "updates": 520},
    {"kind": "train", "env_steps": 3000, "sps": 50.0, "ups": 25.0, "updates": 1020},
]


def test_progress_times_windows_and_leaves_the_warm_up_out_of_the_rate():
    p = Progress()
    for row in TRAIN_ROWS:
        p.add(row)
    assert p.evals == [(1000, -190.0), (2000, -150.0)]
    assert p.train == [(1000, -200.0), (2000, -180.0)]  # the last window had no episode end
    assert (p.env_steps, p.updates, p.best_eval, p.last_eval) == (3000, 1020, -150.0, -150.0)
    # windows: 1000 steps at 500/s (2 s, warm-up), 1000 at 100/s (10 s), 1000 at 50/s (20 s)
    assert p.wall_seconds == pytest.approx(32.0)
    assert p.rate("train") == pytest.approx(2000 / 30)


def test_progress_after_a_resume_times_from_the_resumed_steps():
    p = Progress()
    rows = [
        *TRAIN_ROWS[:3],
        {"kind": "interrupted", "env_steps": 2500, "updates": 700},
        {"kind": "resume", "env_steps": 2000, "note": "restored"},
        {"kind": "train", "env_steps": 3000, "sps": 100.0, "updates": 1020},
    ]
    for row in rows:
        p.add(row)
        if row["kind"] == "interrupted":
            assert p.stop == row
    assert p.stop is None  # going again
    assert p.wall_seconds == pytest.approx(2 + 10 + 10)


def test_a_growing_metrics_file_is_read_as_far_as_it_grew(tmp_path):
    path = tmp_path / "metrics.jsonl"
    lines = [json.dumps(r).encode() + b"\n" for r in TRAIN_ROWS]
    path.write_bytes(lines[0] + lines[1][:10])  # the run is writing its second row
    follower = MetricsFollower(path)
    assert follower.update() and follower.progress.rows == 1
    assert not follower.update()  # nothing new
    with open(path, "ab") as fh:
        fh.write(lines[1][10:] + b"[1, 2]\n" + b'{"kind": "x", "env_steps": -1}\n' + lines[2])
    assert follower.update()
    assert follower.progress.rows == 3 and follower.progress.evals == [(1000, -190.0)]
    with open(path, "ab") as fh:  # a line longer than any row: skipped, not held in memory
        fh.write(b"x" * (MAX_JSON_LINE_BYTES + 10) + b"\n" + lines[3])
    while follower.update():
        pass
    assert follower.progress.rows == 4 and follower.progress.last_eval == -150.0
    path.write_bytes(lines[0])  # replaced by a fresh run: read again from its start
    assert follower.update() and follower.progress.rows == 1
    path.unlink()
    os.mkfifo(path)  # never opened (it would block)
    assert follower.update() and follower.progress.rows == 0


def test_updates_clocked_runs_draw_and_time_in_updates():
    p = Progress(clock="updates")
    for row in [
        {"kind": "train", "env_steps": 0, "updates": 50, "ups": 25.0},
        {"kind": "eval", "env_steps": 0, "updates": 50, "eval_return": 3.0},
        {"kind": "train", "env_steps": 0, "updates": 150, "ups": 50.0},
    ]:
        p.add(row)
    assert p.evals == [(50, 3.0)] and p.wall_seconds == pytest.approx(4.0)
    assert p.rate("train") == pytest.approx(50.0)


def test_status_from_the_folder_alone(tmp_path):
    reader = RunReader()
    done = write_run(tmp_path / "done", TRAIN_ROWS)
    final_checkpoint(done)
    row = reader.read(done)
    assert (row.status, row.algo, row.budget, row.done) == ("finished", "r2d3", 3000, 3000)
    assert row.checkpoint == done / "checkpoints" / "final.pt"

    failed = write_run(
        tmp_path / "failed",
        [
            *TRAIN_ROWS[:2],
            {
                "kind": "failed",
                "env_steps": 1500,
                "updates": 300,
                "error": "ValueError: the loss is not finite\n  at update 300",
            },
        ],
    )
    row = reader.read(failed)
    assert (row.status, row.reason) == (
        "failed",
        "ValueError: the loss is not finite at update 300",
    )

    cut = write_run(
        tmp_path / "cut",
        [*TRAIN_ROWS[:2], {"kind": "interrupted", "env_steps": 1500, "updates": 300}],
    )
    final_checkpoint(cut)
    assert reader.read(cut).status == "interrupted"  # Ctrl-C in a terminal
    write_process_note(cut, ProcessNote(2**22 + 7, ("gone",), time.time(), stop_requested=True))
    assert reader.read(cut).status == "stopped"  # the launcher's stop button

    cli = write_run(tmp_path / "cli", TRAIN_ROWS[:2])  # no process.json: a terminal's run
    assert reader.read(cli).status == "running"
    old = time.time() - 3600
    os.utime(cli / "metrics.jsonl", (old, old))
    assert reader.read(cli).status == "interrupted"  # no row for an hour, no final row


def test_a_run_that_failed_to_start_says_why(tmp_path):
    run = tmp_path / "bad"
    run.mkdir()
    (run / "console.log").write_text(
        "$ demostudio train r2d3 ...\ndemostudio: error: --demos: "
        "expected at least one demo file or folder, got none\n"
    )
    write_process_note(run, ProcessNote(2**22 + 7, ("gone",), time.time(), exit_code=2))
    row = RunReader().read(run)
    assert row.status == "failed"
    assert row.reason == "--demos: expected at least one demo file or folder, got none"


def test_running_means_that_pid_runs_that_command(tmp_path):
    args = [sys.executable, "-c", "import time; time.sleep(30)"]
    proc = subprocess.Popen(args)
    try:
        run = write_run(tmp_path / "live", [])
        write_process_note(run, ProcessNote(proc.pid, tuple(args), time.time()))
        assert process_alive(proc.pid, tuple(args), time.time())
        assert RunReader().read(run).status == "starting"  # no metrics row yet
        write_run(run, TRAIN_ROWS[:1])
        assert RunReader().read(run).status == "running"
        # the same pid running another command line is not this run's process
        time.sleep(0.5)  # its command line is there once it has started
        assert process_alive(proc.pid, tuple(args))
        assert not process_alive(proc.pid, (sys.executable, "other"))
    finally:
        proc.kill()
        proc.wait()
    assert not process_alive(proc.pid, tuple(args))


def test_hostile_process_files_are_ignored(tmp_path):
    run = write_run(tmp_path / "r", TRAIN_ROWS)
    for text in ("[1, 2]", '{"pid": "12", "command": ["x"], "started": 1}', "{", "null"):
        (run / "process.json").write_text(text)
        assert read_process_note(run) is None
    (run / "process.json").unlink()
    os.mkfifo(run / "process.json")  # a FIFO would block a plain read forever
    assert read_process_note(run) is None
    assert RunReader().read(run).status == "running"


def test_runs_of_a_game_from_the_launcher_folder_and_a_runs_folder(tmp_path):
    mine = write_run(tmp_path / "data" / "MountainCar-v0" / "r2d3-1", [])
    cli = write_run(tmp_path / "runs" / "r2d3-MountainCar-v0-s0", [])
    write_run(tmp_path / "runs" / "r2d3-CartPole-v1-s0", [], {"env": "CartPole-v1"})
    found = run_folders("MountainCar-v0", [tmp_path / "data", tmp_path / "runs"])
    assert sorted(found) == sorted([mine, cli])


def test_estimate_from_a_measured_run_and_its_pretraining():
    p = Progress()
    for row in [
        {"kind": "pretrain", "env_steps": 0, "updates": 100, "ups": 50.0},
        {"kind": "pretrain", "env_steps": 0, "updates": 200, "ups": 20.0},
        *TRAIN_ROWS,
    ]:
        p.add(row)
    est = estimate.estimate(
        info("dqfd", pretrain=(("--pretrain-updates", 2000),)), 20_000, p, "run x"
    )
    assert est.rate == pytest.approx(2000 / 30)
    assert est.seconds == pytest.approx(20_000 / (2000 / 30) + 2000 / 20.0)
    assert estimate.estimate(info(), 1000, Progress(), "nothing").seconds is None
    assert estimate.duration(45) == "45 s" and estimate.duration(3 * 3600 + 60) == "3 h 1 min"


def test_calibration_is_an_ordinary_short_training_run(tmp_path):
    words = estimate.calibration_words(
        info("dqfd", pretrain=(("--pretrain-updates", 2000),)), "CartPole-v1", [tmp_path / "demos"]
    )
    assert words[:3] == ["train", "dqfd", "--env"]
    assert words[words.index("--total-env-steps") + 1] == "2000"
    assert words[words.index("--pretrain-updates") + 1] == "100"
    assert words[words.index("--run-dir") + 1] == str(
        estimate.calibration_dir("dqfd", "CartPole-v1")
    )
    assert os.environ["XDG_DATA_HOME"] in words[words.index("--run-dir") + 1]


def test_commands_are_the_cli_as_typed(tmp_path):
    run = tmp_path / "run"
    words = commands.train_words(info(), "MountainCar-v0", run, 2000, [tmp_path / "a.h5"])
    assert commands.shown(words) == (
        f"demostudio train r2d3 --env MountainCar-v0 --run-dir {run} --total-env-steps 2000 "
        f"--demos {tmp_path / 'a.h5'} --eval-every 1000"
    )
    assert "--demos" not in commands.train_words(info("r2d2", "none"), "X-v0", run, 2000, [run])
    assert "--eval-every" not in commands.train_words(info(), "X-v0", run, 100_000, [])
    assert commands.words_of(commands.argv(words)) == words
    assert commands.extension(info(), 3000, 3000, 5000) == ["--total-env-steps", "8000"]
    assert commands.extension(info(), 1000, 3000, 5000) == []
    assert commands.watch_words(run / "final.pt", "ana") == [
        "watch",
        str(run / "final.pt"),
        "--player",
        "ana",
    ]


def test_the_demos_used_leave_out_bad_and_flagged_files(tmp_path):
    folder = tmp_path / "MountainCar-v0"
    shutil.copytree(SAMPLE_DEMOS / "MountainCar-v0", folder)
    files = sorted(folder.glob("*.h5"))
    update_metadata(files[0], tags=["bad"])
    shutil.copy(files[1], folder / "zz-copy.h5")  # the same episode twice: a duplicate
    demos = read_demo_set(folder)
    reasons = {f.path.name: f.left_out for f in demos.files if f.left_out}
    assert reasons == {files[0].name: "tagged bad", "zz-copy.h5": "flagged duplicate"}
    used = demos.totals()
    assert used.episodes == len(files) - 1
    assert demos.demo_paths() == [f for f in files[1:]]  # the files, not the folder
    assert demos.totals(include_left_out=True).episodes == len(files) + 1
    assert demos.demo_paths(include_left_out=True) == [folder]
    assert sum(used.players.values()) == used.episodes and 0.0 <= used.person_share <= 1.0


def _layout() -> TrainLayout:
    r = pygame.Rect
    return TrainLayout(
        r(900, 10, 100, 30),
        [r(20, 170 + 32 * i, 500, 30) for i in range(3)],
        r(300, 100, 150, 20),
        r(20, 500, 30, 30),
        r(200, 500, 30, 30),
        r(20, 600, 500, 40),
        [r(560, 92 + 60 * i, 400, 56) for i in range(4)],
        {"stop": r(20, 480, 100, 40), "watch": r(140, 480, 100, 40)},
    )


def test_panel_keys_pick_budget_start_and_open(tmp_path):
    from demostudio.launcher.demoset import DemoFile, DemoSet

    state = TrainState("MountainCar-v0", "Mountain Car")
    state.demos = DemoSet(tmp_path, (DemoFile(tmp_path / "a.h5", "ana", 100, 1.0),))
    state.set_algos([info("r2d2", "none"), info("r2d3"), info("bc", clock="updates")])
    assert state.algo == "r2d3"  # preselected when there are demos
    lay = _layout()
    for key in (pygame.K_DOWN, pygame.K_TAB, pygame.K_LEFT, pygame.K_LEFT):
        process_event(state, key_event(key), lay)
    assert state.algo == "bc" and state.focus is TrainFocus.BUDGET
    assert state.budget == 1_000  # BC's 5,000 updates, two budgets down (2,000, 1,000)
    process_event(state, key_event(pygame.K_RETURN), lay)
    assert state.take_actions()[0].kind == "start"
    process_event(state, key_event(pygame.K_i), lay)
    assert state.include_left_out
    click = pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=lay.include_box.center, button=1)
    process_event(state, click, lay)
    assert not state.include_left_out
    process_event(state, key_event(pygame.K_c, mod=pygame.KMOD_CTRL), lay)
    assert state.take_actions() == [TrainAction("copy", None)]
    process_event(state, key_event(pygame.K_ESCAPE), lay)
    assert state.take_actions()[0].kind == "close"


def test_panel_without_demos_preselects_one_that_needs_none_and_refuses_the_others(tmp_path):
    from demostudio.launcher.demoset import DemoSet

    state = TrainState("MountainCar-v0", "Mountain Car")
    state.demos = DemoSet(tmp_path, ())
    state.set_algos([info("r2d3"), info("r2d2", "none")])
    assert state.algo == "r2d2"
    lay = _layout()
    process_event(state, pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=(30, 175), button=1), lay)
    assert state.algo == "r2d3"
    process_event(state, key_event(pygame.K_RETURN), lay)
    assert state.take_actions() == [] and "has none to use" in state.status


def test_nothing_is_written_through_a_link_in_a_run_folder(tmp_path):
    from demostudio.launcher.jobs import Jobs

    run = write_run(tmp_path / "r", TRAIN_ROWS)
    outside = tmp_path / "outside.txt"
    outside.write_text("mine")
    (run / "console.log").symlink_to(outside)
    with pytest.raises(OSError, match="got a link"):
        Jobs().spawn("train", ["train", "r2d3"], run / "console.log", run)
    (run / "process.json.tmp").symlink_to(outside)
    write_process_note(run, ProcessNote(123, ("x",), 1.0))
    assert outside.read_text() == "mine" and read_process_note(run).pid == 123


def test_a_second_stop_does_not_cut_the_save_short(tmp_path):
    from demostudio.launcher.jobs import stop_run

    args = [sys.executable, "-c", "import time; time.sleep(30)"]
    proc = subprocess.Popen(args, start_new_session=True)
    try:
        run = write_run(tmp_path / "r", TRAIN_ROWS[:1])
        write_process_note(run, ProcessNote(proc.pid, tuple(args), time.time()))
        time.sleep(0.3)
        assert stop_run(run) == ""  # Ctrl-C's signal: python ends with KeyboardInterrupt
        assert read_process_note(run).stop_requested
        assert proc.wait(10) != 0
    finally:
        proc.kill()
        proc.wait()
    still = subprocess.Popen(args, start_new_session=True)
    try:
        write_process_note(
            run, ProcessNote(still.pid, tuple(args), time.time(), stop_requested=True)
        )
        time.sleep(0.3)
        assert "already stopping" in stop_run(run)
        assert still.poll() is None  # no second signal
    finally:
        still.kill()
        still.wait()

"""End to end: short CartPole runs, checkpoints, resume, CLI commands, demo mismatches."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from agents.core.checkpoint import CheckpointError, load_checkpoint
from agents.core.demos import check_demo, load_demos
from agents.core.logger import read_metrics
from agents.r2d2 import R2D2Config, train_r2d2
from agents.r2d3 import R2D3Config, train_r2d3
from demostudio.cli import main
from demostudio.episode import EpisodeError, make_env

TINY = dict(
    env="CartPole-v1",
    num_actors=2,
    hidden=16,
    lstm=16,
    burn_in=2,
    trace=6,
    period=3,
    batch_size=8,
    min_replay=8,
    env_steps_per_update=8.0,
    eval_every=600,
    eval_episodes=2,
    checkpoint_every=500,
    progress=False,
    tensorboard=False,
)


def test_short_r2d2_run_logs_checkpoints_and_resumes(tmp_path):
    run = tmp_path / "run"
    result = train_r2d2(R2D2Config(**TINY, total_env_steps=1200, run_dir=run))
    assert result.env_steps >= 1200 and result.updates > 100
    rows = read_metrics(run)
    train_rows = [r for r in rows if r["kind"] == "train"]
    evals = [r for r in rows if r["kind"] == "eval"]
    logged = {"loss", "sps", "ups", "episode_return", "demo_share", "is_weight_mean"}
    assert train_rows and logged <= set(train_rows[-1])
    assert len(evals) == 2 and all(np.isfinite(r["eval_return"]) for r in evals)
    assert 0.0 < train_rows[-1]["is_weight_mean"] <= 1.0  # normalised by the batch maximum
    ckpts = sorted(p.name for p in (run / "checkpoints").iterdir())
    assert "final.pt" in ckpts and any(n.startswith("step-") for n in ckpts)
    assert json.loads((run / "config.json").read_text())["algo"] == "r2d2"

    payload = load_checkpoint(run)
    assert payload["counters"]["env_steps"] == result.env_steps
    assert payload["counters"]["updates"] == result.updates
    assert payload["config"]["hidden"] == 16  # config is a plain dict

    # a fresh run refuses a folder with checkpoints; --resume continues the counters
    with pytest.raises(CheckpointError, match="--resume"):
        train_r2d2(R2D2Config(**TINY, total_env_steps=1500, run_dir=run))
    resumed = train_r2d2(R2D2Config(**TINY, total_env_steps=1500, run_dir=run, resume=True))
    assert 1500 <= resumed.env_steps < 1200 + 400
    assert resumed.updates > result.updates
    after = load_checkpoint(run)
    # the resumed learner started from the saved weights: the optimizer step count carried over
    steps = [s["step"] for s in after["optimizer"]["state"].values()]
    assert float(steps[0]) == resumed.updates


def test_resume_with_saved_replay_continues_with_it(tmp_path, record_demos):
    demos = record_demos(tmp_path / "demos", "CartPole-v1", 1)
    run = tmp_path / "run"
    cfg = dict(TINY, demos=(demos,), episode_memory_ratio=0.1, episode_memory_capacity=64)
    first = train_r2d3(R2D3Config(**cfg, total_env_steps=900, run_dir=run, save_replay=True))
    saved = np.load(run / "checkpoints" / "replay.npz", allow_pickle=False)
    assert int(saved["env_steps"]) == first.env_steps
    names = {saved[k].tobytes().decode() for k in saved.files if k.endswith(".name")}
    assert names == {"agent replay", "episode memory"}  # the demo replay is rebuilt instead
    agent_items = next(
        len(saved[k.replace(".name", ".priorities")])
        for k in saved.files
        if k.endswith(".name") and saved[k].tobytes() == b"agent replay"
    )
    payload = load_checkpoint(run)
    assert payload["agent_state"]["episode_memory_episodes"] > 0

    resumed = train_r2d3(R2D3Config(**cfg, total_env_steps=1200, run_dir=run, resume=True))
    note = [r for r in read_metrics(run) if r["kind"] == "resume"][-1]
    assert note["env_steps"] == first.env_steps and note["replay_items"] == agent_items
    assert note["note"].startswith(f"restored agent replay {agent_items} sequences")
    assert "episode memory" in note["note"]
    assert resumed.updates > first.updates


def test_resume_without_saved_replay_says_it_refills(tmp_path):
    run = tmp_path / "run"
    train_r2d2(R2D2Config(**TINY, total_env_steps=300, run_dir=run))
    train_r2d2(R2D2Config(**TINY, total_env_steps=600, run_dir=run, resume=True))
    note = [r for r in read_metrics(run) if r["kind"] == "resume"][-1]
    assert note["replay_items"] == 0 and "refills" in note["note"]
    assert "config changed" not in note["note"]  # a longer budget is not a change worth noting
    changed = {**TINY, "env_steps_per_update": 4.0}
    train_r2d2(R2D2Config(**changed, total_env_steps=700, run_dir=run, resume=True))
    note = [r for r in read_metrics(run) if r["kind"] == "resume"][-1]
    assert note["note"].endswith(
        "config changed from the saved run: env_steps_per_update 8.0 -> 4.0"
    )


def test_checkpoint_round_trip_restores_the_same_policy(tmp_path):
    from agents.core.restore import restore_agent

    run = tmp_path / "run"
    train_r2d2(R2D2Config(**{**TINY, "eval_every": 0}, total_env_steps=300, run_dir=run))
    payload = torch.load(run / "checkpoints" / "final.pt", weights_only=True)
    agent = restore_agent(run)
    for k, v in agent.controller._policy.network.state_dict().items():
        torch.testing.assert_close(v, payload["networks"]["main"][k])
    assert agent.env_id == "CartPole-v1" and agent.algo == "r2d2"
    bad = tmp_path / "bad.pt"
    torch.save({"hello": 1}, bad)
    with pytest.raises(CheckpointError, match="missing"):
        load_checkpoint(bad)
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match="unreadable"):
        load_checkpoint(tmp_path / "junk.pt")


def test_r2d3_run_mixes_demos(tmp_path, cartpole_demos):
    run = tmp_path / "r2d3"
    cfg = R2D3Config(
        **TINY, total_env_steps=1200, run_dir=run, demos=(cartpole_demos,), demo_ratio=0.5,
        episode_memory_ratio=0.1,
    )  # fmt: skip
    result = train_r2d3(cfg)
    shares = [
        r["demo_share"] for r in read_metrics(run) if r["kind"] == "train" and "demo_share" in r
    ]
    assert shares and 0.3 < np.mean(shares) < 0.7
    assert result.updates > 0


def test_demo_mismatch_errors(cartpole_demos, mountaincar_demos):
    env = make_env("CartPole-v1")
    demo = next(iter(sorted(Path(mountaincar_demos).glob("*.h5"))))
    with pytest.raises(
        EpisodeError, match=r"env_id.*expected demos of 'CartPole-v1', got 'MountainCar-v0'"
    ):
        check_demo(demo, "CartPole-v1", env)
    # with the override the id passes, but the spaces still differ: named field + both spaces
    with pytest.raises(
        EpisodeError, match=r"action_space.*expected Discrete\(2\).*got Discrete\(3\)"
    ):
        check_demo(demo, "CartPole-v1", env, accept_env_id="MountainCar-v0")
    mc = make_env("MountainCar-v0")
    car = next(iter(sorted(Path(cartpole_demos).glob("*.h5"))))
    acrobot = make_env("Acrobot-v1")  # Discrete(3) like MountainCar, different observations
    with pytest.raises(EpisodeError, match=r"observation_space.*expected"):
        check_demo(demo, "Acrobot-v1", acrobot, accept_env_id="MountainCar-v0")
    with pytest.raises(EpisodeError, match=str(car.name)):
        load_demos([cartpole_demos], "MountainCar-v0", mc)
    with pytest.raises(FileNotFoundError):
        load_demos([Path(cartpole_demos) / "nope"], "CartPole-v1", env)


def test_cli_train_evaluate_watch_plot(tmp_path, cartpole_demos, capsys):
    run = tmp_path / "cli-run"
    flags = [
        "--num-actors",
        "2",
        "--hidden",
        "16",
        "--lstm",
        "16",
        "--burn-in",
        "2",
        "--trace",
        "6",
    ]
    flags += ["--period", "3", "--batch-size", "8", "--min-replay", "8", "--eval-every", "400"]
    flags += ["--eval-episodes", "1", "--no-progress", "--no-tensorboard"]
    flags += ["--total-env-steps", "800", "--run-dir", str(run), "--device", "cpu"]
    rc = main(["train", "r2d3", "--env", "CartPole-v1", "--demos", str(cartpole_demos), *flags])
    assert rc == 0
    assert "r2d3: " in capsys.readouterr().out

    assert main(["evaluate", str(run), "--episodes", "2", "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "mean return" in out and out.count("episode ") == 2

    rec = tmp_path / "rec"
    assert main(["watch", str(run / "checkpoints" / "final.pt"), "--headless", "--record", str(rec),
                 "--episodes", "2", "--seed", "3", "--device", "cpu"]) == 0  # fmt: skip
    files = sorted((rec / "CartPole-v1").glob("*.h5"))
    assert len(files) == 2
    from demostudio.episode import read_summary

    assert read_summary(files[0]).controller == "policy:r2d3"

    # the play window (SDL dummy driver), recording through the window's wrapper
    win = tmp_path / "win"
    assert main(["watch", str(run), "--episodes", "1", "--fps", "1000", "--record", str(win),
                 "--device", "cpu", "--seed", "1"]) == 0  # fmt: skip
    shown = sorted((win / "CartPole-v1").glob("*.h5"))
    assert len(shown) == 1 and read_summary(shown[0]).length > 0

    png = tmp_path / "curves.png"
    assert main(["plot", str(run), "--out", str(png)]) == 0
    assert png.stat().st_size > 5000

    # user errors: clear message, exit status 2, no traceback
    assert main(["train", "r2d3", "--env", "CartPole-v1", "--run-dir", str(tmp_path / "x")]) == 2
    assert main(["train", "r2d3", "--env", "MountainCar-v0", "--demos", str(cartpole_demos),
                 "--run-dir", str(tmp_path / "y"), "--no-progress"]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "--demos: expected at least one" in err
    assert "[env_id]" in err and "expected demos of 'MountainCar-v0'" in err
    assert main(["evaluate", str(tmp_path / "nothing")]) == 2
    assert main(["watch", str(run), "--headless", "--epsilon", "2"]) == 2
    assert main(["train", "nope"]) == 2


def test_cli_resume_continues_with_the_runs_own_config(tmp_path, cartpole_demos, capsys):
    run = tmp_path / "run"
    first = ["--num-actors", "2", "--hidden", "16", "--lstm", "16", "--burn-in", "2"]
    first += ["--trace", "6", "--period", "3", "--batch-size", "8", "--min-replay", "8"]
    first += ["--env-steps-per-update", "8", "--demo-ratio", "0.3", "--eval-every", "0"]
    first += ["--no-progress", "--no-tensorboard", "--device", "cpu", "--run-dir", str(run)]
    base = ["train", "r2d3", "--env", "CartPole-v1", "--demos", str(cartpole_demos)]
    assert main([*base, *first, "--total-env-steps", "400"]) == 0
    # only the run folder, the new budget and one changed flag: the rest comes from the run
    again = ["train", "r2d3", "--run-dir", str(run), "--resume", "--total-env-steps", "600"]
    assert main([*again, "--batch-size", "4", "--no-progress", "--no-tensorboard"]) == 0
    saved = json.loads((run / "config.json").read_text())
    assert saved["env"] == "CartPole-v1" and saved["hidden"] == 16 and saved["demo_ratio"] == 0.3
    assert saved["env_steps_per_update"] == 8.0 and saved["batch_size"] == 4
    assert saved["demos"] == [str(cartpole_demos)]
    note = [r for r in read_metrics(run) if r["kind"] == "resume"][-1]["note"]
    assert note.endswith("config changed from the saved run: batch_size 8 -> 4")
    assert load_checkpoint(run)["counters"]["env_steps"] >= 600
    capsys.readouterr()


def test_train_cli_does_not_import_torch_or_agents():
    code = (
        "import sys; import demostudio.cli as c; c.build_parser(); "
        "print([m for m in ('torch', 'agents') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_env_seeds_of_nearby_run_seeds_do_not_overlap():
    from agents.core.context import env_seed

    envs = 8  # env i of an actor is first reset with env_seed(...) + i
    streams = [{env_seed(s, 0, 0) + i for i in range(envs)} for s in range(3)]
    assert streams[0] == set(range(envs))  # seed 0 as before the stride
    assert not (streams[0] & streams[1]) and not (streams[1] & streams[2])
    resumed = {env_seed(1, 40, 0) + i for i in range(envs)}  # a resumed run: fresh seeds
    assert not (resumed & streams[1])
    assert 0 <= env_seed(10**9, 10**6, 64) < 2**31  # a valid seed for every env library


def test_stop_evals_stops_once_the_last_evaluations_hold_the_return(tmp_path):
    every = TINY.get("eval_every", 600)
    base = dict(TINY, total_env_steps=20 * every, eval_every=every, stop_return=-1.0)
    one = train_r2d2(R2D2Config(**base, run_dir=tmp_path / "one"))
    assert one.solved_at is not None and len(one.evals) == 1  # CartPole's returns are >= 0
    three = train_r2d2(R2D2Config(**base, stop_evals=3, run_dir=tmp_path / "three"))
    assert len(three.evals) == 3 and three.solved_at == three.evals[-1][0]
    with pytest.raises(ValueError, match="--stop-evals: expected >= 1, got 0"):
        R2D2Config(**base, stop_evals=0, run_dir=tmp_path / "zero").validate()

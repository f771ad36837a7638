"""The CLI's first-contact behaviour: inputs checked before the slow set-up, no progress
fragments above an error line, and what a run says about the demos it loaded."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from demostudio.cli import main

ROOT = Path(__file__).parent.parent


def _cli(*argv: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "from demostudio.cli import main; raise SystemExit(main())", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("make", ["missing", "empty"])
def test_train_refuses_missing_demos_before_the_run_is_built(make, tmp_path):
    demos = tmp_path / "demos"
    if make == "empty":
        demos.mkdir()
    started = time.monotonic()
    done = _cli("train", "r2d3", "--env", "CartPole-v1", "--demos", str(demos),
                "--run-dir", str(tmp_path / "run"))  # fmt: skip
    elapsed = time.monotonic() - started
    assert done.returncode == 2, done.stderr
    lines = _lines(done.stderr)
    assert len(lines) == 1 and lines[0].startswith("demostudio: error: --demos "), done.stderr
    assert str(demos) in lines[0]
    assert elapsed < 5  # python start-up included; torch is never imported
    assert not (tmp_path / "run").exists()


def test_verify_of_a_non_episode_is_one_line_without_a_bar(capsys):
    assert main(["verify", str(ROOT / "README.md")]) == 2
    err = capsys.readouterr().err
    lines = _lines(err)
    assert len(lines) == 1 and "README.md" in lines[0], err
    assert "step/s" not in err and "\r" not in err


def test_minari_export_to_an_existing_id_is_one_line_with_a_hint(record_demos, tmp_path, capsys):
    pytest.importorskip("minari")
    folder = record_demos(tmp_path / "rec", "CartPole-v1", 2)
    argv = ["export", str(folder), "--format", "minari", "--dataset-id", "pc/cart-v0",
            "--out", str(tmp_path / "minari")]  # fmt: skip
    assert main(argv) == 0
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = _lines(err)
    assert len(lines) == 1 and "already exists" in lines[0], err
    assert "--dataset-id" in lines[0] and "overwrites" in lines[0]
    assert "episode/s" not in err and "\r" not in err


def test_demo_report_counts_and_warns_with_how_to_leave_out(record_demos, tmp_path):
    import gymnasium as gym

    from agents.core.demo_report import demo_report
    from agents.core.demos import load_demos
    from demostudio.episode import find_episodes, update_metadata

    folder = record_demos(tmp_path / "rec", "CartPole-v1", 3)
    files = find_episodes(folder)
    update_metadata(files[0], tags=["bad"])
    env = gym.make("CartPole-v1")
    demos = load_demos([folder], "CartPole-v1", env)
    env.close()
    lines = demo_report(demos, [folder])
    steps = sum(len(e) for e in demos.episodes)
    assert lines[0].startswith(f"demos: 3 episodes, {steps} steps from {folder}")
    warned = [line for line in lines[1:] if "tagged bad" in line]
    assert len(warned) == 1 and "1 demo episode(s)" in warned[0] and files[0].name in warned[0]
    assert "--exclude-tag bad" in warned[0]
    assert not any("recovered" in line or "ended early" in line for line in lines)


def test_the_bar_shows_no_return_before_an_episode_has_ended():
    from agents.core.loop import bar_postfix

    assert bar_postfix({"loss": 0.25}) == "loss 0.250"
    assert bar_postfix({"episode_return": float("nan"), "loss": 0.25}) == "loss 0.250"
    assert bar_postfix({"episode_return": 12.0, "loss": 0.5}) == "ret 12.0 loss 0.500"
    assert bar_postfix({}) == ""


@pytest.mark.parametrize("algo", ["ppo", "rnd-ppo"])
def test_on_policy_budget_is_whole_rollouts_and_says_so(algo):
    from agents.registry import get_algorithm

    entry = get_algorithm(algo)
    cfg = entry.config_cls(env="CartPole-v1", num_envs=4, rollout_length=128,
                           segment_length=64, total_env_steps=1000)  # fmt: skip
    train = entry.agent_cls(cfg).phases()[-1]
    assert train.schedule.total == 1024  # two whole rollouts of 4 x 128: the bar's total
    (line,) = [w for w in cfg.warnings() if "--total-env-steps" in w]
    assert "1,024" in line and "512" in line
    cfg.total_env_steps = 1024
    assert not [w for w in cfg.warnings() if "--total-env-steps" in w]


@pytest.mark.parametrize("eval_every", [0, 5_000, 9_000])
def test_a_gate_that_never_tests_is_warned_of(eval_every):
    from agents.registry import get_algorithm

    cls = get_algorithm("r2d3").config_cls
    cfg = cls(env="CartPole-v1", gate_episodes=5, eval_every=eval_every, total_env_steps=5_000)
    (line,) = [w for w in cfg.warnings() if "--gate-episodes" in w]
    assert "no effect" in line and f"--eval-every {eval_every}" in line
    cfg.eval_every = 1_000
    assert not [w for w in cfg.warnings() if "--gate-episodes" in w]
    cfg.gate_episodes = 0
    cfg.eval_every = 0
    assert not [w for w in cfg.warnings() if "--gate-episodes" in w]


def test_progress_to_a_file_is_plain_lines(tmp_path, monkeypatch, capsys):
    """stderr not a terminal (pytest's capture, as a log file): no bar, no cursor codes, a
    plain line at log rows (every row here: the interval is set to 0)."""
    import agents.core.loop as loop

    monkeypatch.setattr(loop, "PLAIN_EVERY_S", 0.0)
    argv = ["train", "ppo", "--env", "CartPole-v1", "--total-env-steps", "1024",
            "--num-envs", "4", "--rollout-length", "128", "--eval-every", "0",
            "--eval-episodes", "1", "--run-dir", str(tmp_path / "run")]  # fmt: skip
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "\r" not in err and "\x1b[" not in err, err
    plain = [line for line in _lines(err) if line.startswith("ppo train CartPole-v1: ")]
    assert plain and plain[-1].startswith("ppo train CartPole-v1: 1024/1024 steps"), err


def test_ray_start_up_to_a_file_is_one_line_not_a_ticker(capsys):
    from agents.core.ray_pool import _startup_display

    with _startup_display("starting Ray", True):
        time.sleep(0.6)  # the ticker would redraw twice in this
    captured = capsys.readouterr()
    assert "\r" not in captured.err + captured.out
    assert _lines(captured.err) == ["starting Ray ..."]
    assert _lines(captured.out)[0].startswith("starting Ray: ready in ")


def test_coach_help_imports_no_torch():
    code = (
        "import sys\nfrom demostudio.cli import main\n"
        "try:\n    main(['coach', 'r2d3', '--help'])\nexcept SystemExit:\n    pass\n"
        "print('torch imported' if 'torch' in sys.modules else 'no torch')"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "--coach-epsilon" in done.stdout and "--demos" in done.stdout
    assert done.stdout.rstrip().endswith("no torch"), done.stdout[-300:]


def test_coach_unknown_algorithm_says_did_you_mean(capsys):
    assert main(["coach", "R2D3", "--env", "CartPole-v1"]) == 2
    lines = _lines(capsys.readouterr().err)
    assert len(lines) == 1 and "did you mean 'r2d3'?" in lines[0]

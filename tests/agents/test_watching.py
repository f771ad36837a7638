"""``watch RUN --headless`` plays the agent's episodes alone and prints their returns; with
--record it also saves them through the recording wrapper (agents.watching)."""

from __future__ import annotations

from agents.core.restore import restore_agent
from agents.watching import watch_headless
from demostudio.cli import main
from demostudio.episode import read_summary
from tests.agents.test_success import _checkpoint


def test_headless_watch_plays_alone_and_prints_the_returns(tmp_path, capsys, monkeypatch):
    run = _checkpoint(tmp_path, "CartPole-v1")
    monkeypatch.chdir(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    argv = ["watch", str(run), "--headless", "--episodes", "2", "--seed", "3", "--device", "cpu"]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in out[:2]] == ["episode 0", "episode 1"]
    assert all("return " in line and "length " in line for line in out[:2])
    assert out[2].startswith("2 episode(s) watched, mean return ")
    assert out[2].endswith("(not recorded: --record DIR saves them)")
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written


def test_headless_watch_records_when_asked(tmp_path, capsys):
    run = _checkpoint(tmp_path, "CartPole-v1")
    rec = tmp_path / "rec"
    argv = ["watch", str(run), "--headless", "--episodes", "2", "--record", str(rec), "--seed",
            "3", "--device", "cpu"]  # fmt: skip
    assert main(argv) == 0
    files = sorted((rec / "CartPole-v1").glob("*.h5"))
    out = capsys.readouterr().out.splitlines()
    assert len(files) == 2 and out[-1].endswith(f"saved in {rec / 'CartPole-v1'})")
    for line, path in zip(out[:2], files):
        assert line.endswith(str(path))
        summary = read_summary(path)
        assert f"length {summary.length}" in line and f"{summary.total_return:.2f}" in line
        assert summary.controller == "policy:r2d2"


def test_watch_headless_is_evaluations_loop_with_the_same_seeds(tmp_path):
    agent = restore_agent(_checkpoint(tmp_path, "MountainCar-v0"), "cpu", 0.0, 0)
    watched = watch_headless(agent, 2, seed=5)
    assert [w.path for w in watched] == [None, None]
    assert [w.reached_goal for w in watched] == [False, False]  # untrained: the time limit
    again = watch_headless(restore_agent(agent.path, "cpu", 0.0, 0), 2, seed=5)
    assert [w.episode_return for w in again] == [w.episode_return for w in watched]

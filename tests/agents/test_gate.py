"""The deployment gate (--gate-episodes): the rule, its env steps, what evaluation and a
checkpoint play, resume, and a checkpoint's deployed network treated as hostile."""

from __future__ import annotations

import gymnasium as gym
import pytest
import torch

from agents.core.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from agents.core.evaluate import run_episodes
from agents.core.gate import DeployGate, lengthen
from agents.core.logger import read_metrics
from agents.core.restore import restore_agent
from agents.r2d2 import R2D2Config, train_r2d2
from demostudio.cli import main
from tests.agents.test_training import TINY as TRAINING_TINY

# a margin no CartPole return spread reaches: the first test deploys its network
TINY = {**TRAINING_TINY, "checkpoint_every": 100_000, "gate_episodes": 2, "gate_share": 1.0,
        "gate_margin": 1000.0}  # fmt: skip


def test_a_challenger_is_deployed_only_when_every_test_episode_reaches_the_best_seen():
    gate = DeployGate(2, margin=0.0)
    assert gate.weights is None  # before the first test evaluation plays the learner's latest
    assert not gate.judge([10.0, 20.0], {"w": torch.zeros(2)}, version=1)  # 10 < its own 20
    # nothing has passed: the tested network with the highest worst episode is shown
    assert (gate.version, gate.score, gate.passed, gate.best) == (1, 10.0, False, 20.0)
    assert gate.cannot_pass([15.0]) and not gate.cannot_pass([20.0])
    assert not gate.cannot_pass([25.0]) and gate.cannot_pass([25.0, 24.0])  # below its own best
    # nothing passed: a test goes on while it may still lead (no episode below the worst, 10)
    assert not gate.hopeless([15.0]) and gate.hopeless([9.0]) and gate.hopeless([25.0, 9.0])
    assert not gate.judge([9.0], {"w": torch.full((2,), 5.0)}, version=2)
    assert gate.version == 1  # stopped at 9, below the provisional network's worst, 10
    assert not gate.judge([30.0], {"w": torch.ones(2)}, version=3)  # 1 of 2: no record
    assert (gate.version, gate.best) == (1, 30.0)
    assert not gate.judge([12.0, 11.0], {"w": torch.ones(2)}, version=3)  # 12 < its best
    assert (gate.version, gate.score) == (3, 11.0)  # a whole test whose worst is higher
    assert gate.due(env_steps=1, gate_steps=10**6)  # tests are due until one passes
    learner = {"w": torch.ones(2)}
    assert gate.judge([30.0, 30.0], learner, version=4)
    assert (gate.score, gate.version, gate.passed) == (30.0, 4, True)
    learner["w"] += 7.0  # the learner's weights move on; the deployed copy does not
    assert torch.equal(gate.weights["w"], torch.ones(2))
    assert not gate.judge([31.0, 30.0], learner, version=5)  # 30 < the new best 31
    assert gate.version == 4 and gate.best == 31.0 and torch.equal(gate.weights["w"], torch.ones(2))

    lenient = DeployGate(2, margin=5.0)
    assert lenient.judge([100.0, 96.0], learner, version=1)  # within 5 of the best, 100
    assert lenient.cannot_pass([94.0]) and not lenient.cannot_pass([95.0])
    assert lenient.judge([101.0, 97.0], learner, version=2) and lenient.score == 97.0

    assert not gate.judge([1.0], learner, version=6) and gate.version == 4  # a pass is kept

    capped = DeployGate(1, margin=0.0, share=0.25)
    assert capped.due(env_steps=100, gate_steps=500)  # nothing passed yet: always
    capped.judge([1.0], learner, version=1)
    assert capped.due(1000, 250) and not capped.due(1000, 251)


def _refuse_after_first(monkeypatch):
    """Every gate test after the run's first (or a resumed run's) is refused."""
    judge = DeployGate.judge

    def strict(self, returns, weights, version):
        return judge(self, returns, weights, version) if self.weights is None else False

    monkeypatch.setattr(DeployGate, "judge", strict)


def test_gate_steps_count_evaluation_plays_the_deployed_network_and_resume_keeps_it(
    tmp_path, monkeypatch, capsys
):
    _refuse_after_first(monkeypatch)
    run = tmp_path / "run"
    result = train_r2d2(R2D2Config(**TINY, total_env_steps=1800, run_dir=run))
    rows = read_metrics(run)
    gates = [r for r in rows if r["kind"] == "gate"]
    evals = [r for r in rows if r["kind"] == "eval"]
    assert len(gates) == len(evals) - 1 >= 2  # before every scheduled evaluation, not the end
    assert [g["gate_passed"] for g in gates] == [1.0] + [0.0] * (len(gates) - 1)
    payload = load_checkpoint(run / "checkpoints" / "final.pt")
    counters = payload["counters"]
    assert counters["gate_steps"] == gates[-1]["gate_steps"] >= 2 * 8  # >= 8 steps an episode
    assert counters["env_steps"] == result.env_steps >= 1800
    # the tests' steps bring no updates: the replay ratio counts the actors' steps only
    assert result.updates <= (result.env_steps - counters["gate_steps"]) / 8.0

    deployed = payload["deployed"]
    assert deployed["version"] == gates[0]["deployed_updates"] < result.updates
    assert {e["deployed_updates"] for e in evals} == {deployed["version"]}  # named in each
    latest = payload["networks"]["main"]
    assert any(not torch.equal(deployed["weights"][k], latest[k]) for k in latest)
    # the final evaluation played the deployed network, and so does a restored agent
    agent = restore_agent(run / "checkpoints" / "final.pt")
    for k, v in agent.controller.policy.network.state_dict().items():
        assert torch.equal(v, deployed["weights"][k])
    env = gym.make("CartPole-v1")
    replayed = run_episodes(env, agent.controller, 2, seed=10_000 + result.env_steps)
    assert evals[-1]["eval_return"] == pytest.approx(replayed.mean)
    # a test stops at the first failed episode
    assert len(run_episodes(env, agent.controller, 5, seed=0, stop=lambda r: True).returns) == 1
    assert all(g["gate_played"] <= 2 and g["gate_worst"] <= g["gate_return"] for g in gates)
    assert agent.deployed == (deployed["version"], deployed["score"], True)
    assert main(["evaluate", str(run), "--episodes", "1"]) == 0
    said = capsys.readouterr().err
    kept = f"plays the network its deployment gate kept (learner update {deployed['version']}"
    assert kept in said
    png = tmp_path / "gate.png"  # the learner's tests beside the deployed network's evaluations
    assert main(["plot", str(run), "--metric", "gate_worst", "--out", str(png)]) == 0
    assert png.stat().st_size > 1000

    resumed = train_r2d2(R2D2Config(**TINY, total_env_steps=3000, run_dir=run, resume=True))
    after = load_checkpoint(run / "checkpoints" / "final.pt")
    assert resumed.env_steps >= 3000
    assert after["deployed"]["version"] == deployed["version"]  # every later test refused
    assert after["deployed"]["score"] == deployed["score"]
    assert after["counters"]["gate_steps"] > counters["gate_steps"]


def test_until_a_network_passes_the_one_with_the_highest_worst_test_episode_is_shown(
    tmp_path, capsys
):
    run = tmp_path / "run"  # margin 0, 20 episodes: no network of this tiny run passes
    cfg = {**TINY, "gate_margin": 0.0, "gate_episodes": 20, "eval_every": 300}
    train_r2d2(R2D2Config(**cfg, total_env_steps=1500, run_dir=run))
    rows = read_metrics(run)
    gates = [r for r in rows if r["kind"] == "gate"]
    evals = [r for r in rows if r["kind"] == "eval"]
    assert len(gates) >= 3 and not any(g["gate_passed"] or g["deployed_passed"] for g in gates)
    shown = -float("inf")
    for g in gates:  # the shown network changes only to one whose worst is at least as high
        assert g["deployed_worst"] == max(shown, g["gate_worst"])
        shown = g["deployed_worst"]
    # each evaluation plays what the test before it left deployed (the run's end: no test)
    assert [e["deployed_updates"] for e in evals] == [g["deployed_updates"] for g in gates] + [
        gates[-1]["deployed_updates"]
    ]
    assert main(["evaluate", str(run), "--episodes", "1"]) == 0
    assert "provisional: no network had passed its test" in capsys.readouterr().err


def test_tests_start_only_while_they_have_taken_at_most_their_share(tmp_path):
    run = tmp_path / "run"
    cfg = R2D2Config(**{**TINY, "gate_share": 0.1, "eval_every": 200, "gate_episodes": 5},
                     total_env_steps=3000, run_dir=run)  # fmt: skip
    train_r2d2(cfg)
    rows = read_metrics(run)
    gates = [r for r in rows if r["kind"] == "gate"]
    evals = [r for r in rows if r["kind"] == "eval"]
    assert 2 <= len(gates) < len(evals) - 1  # some evaluations came without a test
    spent_before = 0
    for g in gates:
        steps = g["gate_steps"] - spent_before
        if spent_before:  # the first test always runs
            assert spent_before <= 0.1 * (g["env_steps"] - steps)
        spent_before = g["gate_steps"]
    for share in (0.0, 1.5):
        with pytest.raises(ValueError, match=r"--gate-share: expected in \(0, 1\], got"):
            R2D2Config(**{**TINY, "gate_share": share}).validate()


def _steps_to_truncation(env: gym.Env) -> int:
    env.reset(seed=0)
    steps, truncated = 0, False
    while not truncated:
        _, _, terminated, truncated, _ = env.step(steps % 2)
        assert not terminated
        steps += 1
    return steps


def test_test_episodes_play_to_a_multiple_of_the_step_limit(tmp_path):
    env = gym.make("MountainCar-v0", max_episode_steps=10)  # ends by its limit only
    assert _steps_to_truncation(env) == 10
    assert lengthen(env, 2.5) == 25 and _steps_to_truncation(env) == 25
    assert lengthen(gym.make("MountainCar-v0").unwrapped, 3.0) is None  # no limit to lengthen
    run = tmp_path / "run"
    cfg = {**TINY, "env": "MountainCar-v0", "env_kwargs": '{"max_episode_steps": 20}',
           "gate_horizon": 3.0, "eval_every": 200}  # fmt: skip
    train_r2d2(R2D2Config(**cfg, total_env_steps=400, run_dir=run))
    rows = read_metrics(run)
    gates = [r for r in rows if r["kind"] == "gate"]
    evals = [r for r in rows if r["kind"] == "eval"]
    assert gates and all(g["gate_return"] == -60.0 for g in gates)  # 3 x 20 steps of -1
    assert all(e["eval_length"] == 20.0 for e in evals)  # evaluation keeps the env's limit
    assert load_checkpoint(run / "checkpoints" / "final.pt")["counters"]["gate_steps"] == (
        60 * sum(g["gate_played"] for g in gates)
    )
    for bad in (0.5, 10**6):
        with pytest.raises(ValueError, match="--gate-horizon: expected"):
            R2D2Config(**{**TINY, "gate_horizon": bad}).validate()


def test_a_checkpoints_deployed_network_is_checked_like_the_rest(tmp_path):
    run = tmp_path / "run"
    train_r2d2(R2D2Config(**TINY, total_env_steps=700, run_dir=run))
    path = run / "checkpoints" / "final.pt"
    payload = load_checkpoint(path)
    payload.pop("path")
    good = payload["deployed"]
    bad_cases = {
        "text": ({**good, "weights": "x"}, r"\[deployed.weights\]: expected a dict of tensors"),
        "number": ({**good, "weights": {"a": 1}}, "got int for 'a'"),
        "score": ({**good, "score": "high"}, r"\[deployed.score\]: expected a number"),
        "best": ({**good, "best": float("nan")}, r"\[deployed.best\]: expected a number"),
        "passed": ({**good, "passed": "yes"}, r"\[deployed.passed\]: expected true or false"),
        "shape": (
            {**good, "weights": {k: torch.zeros(3) for k in good["weights"]}},
            r"\[deployed.weights.encoder.encoders.obs.net.0.weight\]: expected shape",
        ),
    }
    for name, (deployed, message) in bad_cases.items():
        if name == "best":  # read only when a run resumes
            continue
        hostile = tmp_path / f"{name}.pt"
        save_checkpoint(hostile, {**payload, "deployed": deployed})
        with pytest.raises(CheckpointError, match=message):
            restore_agent(hostile)
    # nothing deployed yet: the checkpoint plays the learner's latest weights
    save_checkpoint(tmp_path / "none.pt", {**payload, "deployed": {**good, "weights": None}})
    assert restore_agent(tmp_path / "none.pt").deployed is None
    # written before provisional networks: what was deployed had passed
    old = {k: v for k, v in good.items() if k != "passed"}
    save_checkpoint(tmp_path / "old.pt", {**payload, "deployed": old})
    assert restore_agent(tmp_path / "old.pt").deployed[2] is True
    # resuming a run whose last checkpoint holds a bad gate: one line naming the field
    for name, message in (("shape", r"\[deployed.weights\]: expected .* of shape"),
                          ("best", bad_cases["best"][1])):  # fmt: skip
        save_checkpoint(path, {**payload, "deployed": bad_cases[name][0]})
        with pytest.raises(CheckpointError, match=message):
            train_r2d2(R2D2Config(**TINY, total_env_steps=900, run_dir=run, resume=True))


def test_gate_flags_are_checked():
    with pytest.raises(ValueError, match="--gate-episodes: expected >= 0, got -1"):
        R2D2Config(**{**TINY, "gate_episodes": -1}).validate()
    with pytest.raises(ValueError, match="--gate-margin: expected >= 0"):
        R2D2Config(**{**TINY, "gate_margin": -1.0}).validate()
    with pytest.raises(ValueError, match="--gate-episodes: expected <= 10000"):
        R2D2Config(**{**TINY, "gate_episodes": 10**6}).validate()

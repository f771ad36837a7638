"""Training from take-over files: ``--demo-steps person`` learns from exactly the person's
stretches (the agent's steps before each one are burn-in context), for a value-based
algorithm (R2D3) and for BC; ``all`` learns from every step; a file nobody took over is
used whole."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from agents.bc import BCConfig, train_bc
from agents.core.demos import demo_sequences, load_demos
from agents.core.logger import read_metrics
from agents.core.networks import HeadSpec, NetworkSpec, RecurrentNetwork
from agents.core.preprocess import make_preprocessor
from agents.core.sequences import EndBehavior
from agents.r2d3 import R2D3, R2D3Config
from demostudio.controllers import scripted_controller
from demostudio.episode import RecordEpisodes, load_episode, make_env

from .conftest import TINY

AGENT = "policy:r2d3"
ANN = "person:ann"
STEPS = 110
# (first step, actor) of each stretch: the agent drives, Ann takes over twice.
STRETCHES = {0: AGENT, 30: ANN, 50: AGENT, 80: ANN, 95: AGENT}
PERSON = set(range(30, 50)) | set(range(80, 95))


@pytest.fixture(scope="module")
def takeover_file(tmp_path_factory) -> Path:
    """A MountainCar episode of 110 steps in which a person took over twice."""
    folder = tmp_path_factory.mktemp("takeover-demos") / "MountainCar-v0"
    rec = RecordEpisodes(make_env("MountainCar-v0"), folder, controller=AGENT, record_frames=False)
    ctrl = scripted_controller("MountainCar-v0")
    obs, _ = rec.reset(seed=5)
    for t in range(STEPS):
        if t in STRETCHES:
            rec.set_actor(STRETCHES[t])
        obs, *_ = rec.step(ctrl.act(rec, obs))
    rec.close()
    return rec.saved[0]


def _step_index(episode) -> dict[bytes, int]:
    """Observation bytes -> step (MountainCar's observations never repeat in an episode)."""
    obs = np.asarray(episode.observations, np.float32)
    index = {obs[t].tobytes(): t for t in range(len(obs))}
    assert len(index) == len(obs)
    return index


def _network(env, recurrent: bool, head: str) -> RecurrentNetwork:
    torch.manual_seed(0)
    pre = make_preprocessor(env.observation_space)
    kind = "dueling_q" if head == "q" else "logits"
    spec = NetworkSpec(pre.spec, 3, 8, 8, recurrent, {head: HeadSpec(kind)})
    return RecurrentNetwork(spec)


def _learned(seqs, episode, burn_in: int) -> tuple[list[set[int]], list[list[int]]]:
    """Per sequence: the steps it learns from, and the step at each position."""
    index = _step_index(episode)
    learned, steps = [], []
    for b in range(len(seqs)):
        at = [index.get(seqs.obs["obs"][b, j].tobytes(), -1) for j in range(seqs.mask.shape[1])]
        steps.append(at)
        learned.append({at[j] for j in np.flatnonzero(seqs.mask[b]) if j >= burn_in})
    return learned, steps


@pytest.mark.parametrize(
    ("head", "recurrent", "burn_in", "trace", "period"),
    [("q", True, 4, 8, 4), ("logits", False, 0, 20, 20)],
    ids=["value-based", "bc"],
)
def test_person_steps_exactly_with_the_agents_steps_as_context(
    takeover_file, head, recurrent, burn_in, trace, period
):
    env = make_env("MountainCar-v0")
    demos = load_demos([takeover_file], "MountainCar-v0", env)  # --demo-steps person
    assert demos.steps == len(PERSON) == 35
    episode = demos.episodes[0]
    seqs = demo_sequences(
        demos, make_preprocessor(env.observation_space), _network(env, recurrent, head),
        burn_in + trace + 1, period, EndBehavior.ZERO_PAD, torch.device("cpu"), burn_in=burn_in,
    )  # fmt: skip
    assert "_demo_step" not in seqs.extras  # the loader's private extra is gone
    learned, steps = _learned(seqs, episode, burn_in)
    assert set().union(*learned) == PERSON  # exactly the person's steps ...
    assert all(learned)  # ... and no sequence without one
    for b in range(len(seqs)):  # a real step is learned from only where the person acted
        real = [steps[b][j] for j in np.flatnonzero(seqs.mask[b])]
        assert set(real) <= PERSON
        for j in np.flatnonzero(seqs.mask[b]):
            assert seqs.action[b, j] == episode.actions[steps[b][j]]
    if burn_in:  # the stretches' first steps come after the agent's steps as burn-in
        for first in (30, 80):
            b = next(b for b in range(len(seqs))
                     if first in steps[b] and steps[b].index(first) >= burn_in)  # fmt: skip
            j = steps[b].index(first)
            assert steps[b][j - burn_in : j] == list(range(first - burn_in, first))
            assert not seqs.mask[b, :j].any()  # the agent's steps are context only
            assert seqs.prev_action[b, j] == episode.actions[first - 1]


def test_all_steps_and_files_nobody_took_over(takeover_file, mountaincar_demo):
    env = make_env("MountainCar-v0")
    every = load_demos([takeover_file], "MountainCar-v0", env, demo_steps="all")
    assert every.steps == STEPS and every.mask(0).all()
    scripted = load_demos([mountaincar_demo], "MountainCar-v0", env)  # a script's demo
    assert scripted.steps == len(load_episode(mountaincar_demo)) > 0
    with pytest.raises(ValueError, match="--demo-steps: expected one of"):
        load_demos([takeover_file], "MountainCar-v0", env, demo_steps="agent")


class _KeepsDemoReplay(R2D3):
    buffer = None

    def sources(self, ctx):
        sources = super().sources(ctx)
        type(self).buffer = sources[0].buffer
        return sources


def test_r2d3_trains_on_the_persons_stretches(takeover_file, tmp_path):
    cfg = R2D3Config(
        **{**TINY, "env": "MountainCar-v0"}, demos=(takeover_file,), total_env_steps=200,
        burn_in=4, trace=8, period=4, eval_every=0, run_dir=tmp_path / "run",
    )  # fmt: skip
    from agents.core.run import train

    result = train(_KeepsDemoReplay(cfg))
    assert result.updates > 0
    buf = _KeepsDemoReplay.buffer
    seqs = buf.sample(len(buf)).batch  # the demo replay's sequences (with repeats)
    learned, _ = _learned(seqs, load_episode(takeover_file), cfg.burn_in)
    assert set().union(*learned) <= PERSON and all(learned)


def test_bc_learns_only_the_persons_actions(takeover_file, tmp_path):
    cfg = BCConfig(
        env="MountainCar-v0", demos=(takeover_file,), max_updates=20, val_every=10,
        val_fraction=0.0, hidden=16, lstm=16, batch_size=4, eval_episodes=1, progress=False,
        tensorboard=False, device="cpu", run_dir=tmp_path / "bc",
    )  # fmt: skip
    train_bc(cfg)
    split = next(r for r in read_metrics(tmp_path / "bc") if r.get("kind") == "split")
    assert split["train_steps"] == len(PERSON)

"""ALE envs stepped by ale-py's vector env give the actors what the list of envs gives:
the same frames, rewards, episode ends and resets; an R2D2 run on it learns from them."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest
import torch

from agents.core.actor import ActorSpec, VectorActor, make_vector_actor
from agents.core.agent import EnvInfo
from agents.core.ale_vector import NO_FRAME_LIMIT, AleBatchEnvs, ale_settings, open_batch_envs
from agents.core.layout import with_layout
from agents.core.logger import read_metrics
from agents.core.networks import RecurrentQNetwork
from agents.core.policy import BatchPolicy, EpsilonGreedy
from agents.core.preprocess import make_preprocessor
from agents.core.sequences import EndBehavior
from agents.r2d2 import R2D2, R2D2Config, train_r2d2
from demostudio.episode import make_env

pytest.importorskip("ale_py")

# no sticky actions: the two backends draw them from differently seeded generators; a frame
# limit of 40 emulator frames truncates every episode after 10 steps (frame skip 4)
KWARGS = {"repeat_action_probability": 0.0, "max_num_frames_per_episode": 40}


def make(env_id: str = "ALE/Pong-v5", **kwargs) -> gym.Env:
    return make_env(env_id, {**KWARGS, **kwargs})


def actor(n: int, batch: bool, **kwargs) -> VectorActor:
    env = make(**kwargs)
    pre = make_preprocessor(env.observation_space)
    net = RecurrentQNetwork(pre.spec, int(env.action_space.n), hidden=16, lstm=8)
    policy = BatchPolicy.copy_of(net, EpsilonGreedy(np.ones(n)), n, torch.device("cpu"),
                                 np.random.default_rng(0))  # fmt: skip
    envs = open_batch_envs(lambda: make(**kwargs), n, "ale", num_threads=1) if batch else None
    assert batch == (envs is not None)
    return VectorActor([lambda: make(**kwargs)] * n, policy, pre, 6, 3, EndBehavior.ZERO_PAD,
                       seed=3, batch_envs=envs)  # fmt: skip


@pytest.mark.parametrize("obs_type", ["rgb", "grayscale"])
def test_both_backends_step_the_same_frames_rewards_and_episode_ends(obs_type):
    """Same rewards, flags and dtypes, each env reset on the step after its episode ended,
    over three episodes of every env; the same preprocessed frames bit for bit but on the
    step that ends an episode (one emulator frame earlier there)."""
    n = 2
    ale, ref = actor(n, True, obs_type=obs_type), actor(n, False, obs_type=obs_type)
    assert ale.envs == [] and ale._space == ref._space
    for k, v in ref._obs.items():
        np.testing.assert_array_equal(ale._obs[k], v)
        assert ale._obs[k].dtype == v.dtype == np.uint8 and v.shape == (n, 84, 84)
    rng = np.random.default_rng(1)
    autoreset, ends = np.zeros(n, bool), 0
    for _ in range(33):
        actions = rng.integers(0, 6, n)
        ale._autoreset = ref._autoreset = autoreset
        got, want = ale._step_envs(actions), ref._step_envs(actions)
        for a, b in zip(got[1:], want[1:]):
            np.testing.assert_array_equal(a, b)
            assert a.dtype == b.dtype and a.shape == b.shape
        assert not got[1][autoreset].any() and not got[3][autoreset].any()
        frames, ref_frames = ale.preprocess(got[0])["obs"], ref.preprocess(want[0])["obs"]
        autoreset = want[2] | want[3]
        going = ~autoreset
        np.testing.assert_array_equal(frames[going], ref_frames[going])
        # an episode's last screen is the one a frame before the frame that ended it
        if autoreset.any():
            assert (frames[autoreset] != ref_frames[autoreset]).mean() < 0.01
        ends += int(autoreset.sum())
    assert ends == 3 * n  # truncated by the frame limit after 10 steps, then reset
    ale.close()
    ref.close()


def test_settings_follow_the_env_and_refuse_what_the_vector_env_cannot_do():
    s = ale_settings(make("ALE/Breakout-v5", repeat_action_probability=0.1, frameskip=3))
    assert s is not None
    assert (s["game"], s["frameskip"]) == ("breakout", 3)
    assert s["repeat_action_probability"] == pytest.approx(0.1)  # ALE keeps a float32
    assert (s["img_height"], s["img_width"], s["grayscale"]) == (210, 160, False)
    unlimited = ale_settings(make_env("ALE/Breakout-v5", {"max_num_frames_per_episode": 0}))
    assert unlimited is not None and unlimited["max_num_frames_per_episode"] == NO_FRAME_LIMIT
    # a step limit, a stochastic frame skip, RAM, a wrapper, not ALE: the list of envs
    assert ale_settings(make_env("ALE/Breakout-v5", {"max_episode_steps": 50})) is None
    assert ale_settings(make("ALE/Breakout-v5", frameskip=(2, 5))) is None
    assert ale_settings(make("ALE/Breakout-v5", obs_type="ram")) is None
    assert ale_settings(with_layout(make("ALE/Breakout-v5"), True, 0)) is None
    assert ale_settings(make_env("CartPole-v1")) is None
    assert open_batch_envs(lambda: make_env("CartPole-v1"), 2, "ale") is None
    assert open_batch_envs(make, 2, "python") is None


def test_make_vector_actor_picks_the_backend_the_spec_names():
    env = make()
    pre = make_preprocessor(env.observation_space)
    net = RecurrentQNetwork(pre.spec, int(env.action_space.n), hidden=16, lstm=8)
    for choice, kind in (("ale", AleBatchEnvs), ("python", type(None))):
        spec = ActorSpec(make, net, EpsilonGreedy(np.ones(2)), 2, pre, 6, 3,
                         EndBehavior.ZERO_PAD, 0, 1, atari_vector=choice)  # fmt: skip
        a = make_vector_actor(spec, torch.device("cpu"))
        assert isinstance(a.batch_envs, kind) and len(a.envs) == (2 if kind is type(None) else 0)
        assert a.step().env_steps == 2
        a.close()


R2D2_ON_PONG = dict(
    env="ALE/Pong-v5", env_kwargs='{"max_num_frames_per_episode": 200}', num_actors=2,
    hidden=16, lstm=16, burn_in=2, trace=6, period=3, batch_size=4, min_replay=4,
    env_steps_per_update=40.0, eval_episodes=1, progress=False, tensorboard=False,
    atari_vector="ale",
)  # fmt: skip


def test_r2d2_actors_on_ale_write_sequences_of_frames():
    """The R2D2 agent's own actor spec with --atari-vector ale: its actors write sequences
    of 84x84 frames of the configured length, across episode ends."""
    cfg = R2D2Config(**R2D2_ON_PONG)
    agent = R2D2(cfg)
    env = agent.make_env()
    info = EnvInfo(cfg.env, env, make_preprocessor(env.observation_space))
    net = agent.build_networks(info)["main"]
    spec = ActorSpec(agent.make_env, net, agent.acting_selector(2), 2, info.preprocess,
                     cfg.sequence_length, cfg.period, EndBehavior(cfg.end_behavior), 0, 1,
                     atari_vector=cfg.atari_vector)  # fmt: skip
    a = make_vector_actor(spec, torch.device("cpu"))
    assert isinstance(a.batch_envs, AleBatchEnvs)
    seqs, finished, steps = [], [], 0
    while steps < 120:
        out = a.step()
        steps += out.env_steps
        finished += out.finished
        if out.sequences is not None:
            seqs.append(out.sequences)
    a.close()
    L = cfg.sequence_length
    assert [e.length for e in finished] == [50, 50]  # 200 frames, frame skip 4
    assert all(s.obs["obs"].shape[1:] == (L, 84, 84) and s.obs["obs"].dtype == np.uint8
               for s in seqs)  # fmt: skip
    assert all(s.action.shape[1] == L for s in seqs) and sum(len(s) for s in seqs) >= 30
    real = np.concatenate([s.mask.sum(axis=1) for s in seqs])
    assert real.min() < real.max()  # the episode ends were cut and padded


def test_r2d2_run_on_ale_takes_steps_and_learns(tmp_path):
    run = tmp_path / "run"
    result = train_r2d2(R2D2Config(**R2D2_ON_PONG, total_env_steps=240, run_dir=run))
    assert result.env_steps >= 240 and result.updates >= 1
    rows = read_metrics(run)
    assert any("episode_return" in r for r in rows if r["kind"] == "train")
    assert json.loads((run / "config.json").read_text())["atari_vector"] == "ale"

"""RND-PPO end to end through the run shell: a short run on CartPole and on MiniGrid
(Dict observations), the frozen target, evaluation through the registry, and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch

from agents.core.checkpoint import load_checkpoint
from agents.core.restore import restore_agent
from agents.registry import get_algorithm
from agents.rnd_ppo import PPO, RNDPPO
from agents.rnd_ppo.actor_critic import OnPolicyActorCritic
from agents.rnd_ppo.intrinsic import rnd_leaf
from tests.agents_rnd_ppo.helpers import tiny


def rows(run_dir, kind):
    lines = (run_dir / "metrics.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r["kind"] == kind]


def test_short_run_logs_intrinsic_reward_and_restores(tmp_path):
    result = get_algorithm("rnd-ppo").train(tiny(tmp_path / "run"))
    assert result.env_steps >= 96 and result.updates > 0
    train = rows(result.run_dir, "train")
    assert train and all(r["intrinsic_reward"] > 0 for r in train)
    assert {"value_loss/ext", "value_loss/int", "rnd_loss", "approx_kl"} <= set(train[-1])
    assert rows(result.run_dir, "obs_norm_init")[0]["random_steps"] == 8
    restored = restore_agent(result.run_dir / "checkpoints" / "final.pt", seed=0)
    assert restored.algo == "rnd-ppo" and restored.counters["env_steps"] == result.env_steps
    import gymnasium as gym

    env = gym.make("CartPole-v1")
    obs, info = env.reset(seed=0)
    restored.controller.reset(env, obs, info)
    assert restored.controller.act(env, obs) in (0, 1)


def test_ppo_has_no_intrinsic_parts(tmp_path):
    result = get_algorithm("ppo").train(tiny(tmp_path / "run", intrinsic=False))
    payload = load_checkpoint(result.run_dir / "checkpoints" / "final.pt")
    assert payload["algo"] == "ppo" and set(payload["networks"]) == {"main"}
    assert set(payload["network_specs"]["main"]["heads"]) == {"logits", "value_ext"}
    assert "intrinsic_reward" not in rows(result.run_dir, "train")[-1]


def test_building_the_networks_sets_nothing_on_the_agent(tmp_path):
    """The run shell builds the networks more than once (first on the meta device, to count
    and check sizes): RND's statistics come from configure, once; the builds are pure."""
    from agents.core.agent import EnvInfo
    from agents.core.preprocess import make_preprocessor
    from demostudio.episode import make_env

    agent = RNDPPO(tiny(tmp_path / "run"))
    env = make_env("CartPole-v1")
    info = EnvInfo("CartPole-v1", env, make_preprocessor(env.observation_space))
    agent.configure(info)
    bonus, before = agent.bonus, {k: id(v) for k, v in vars(agent).items()}
    with torch.device("meta"):
        meta = agent.build_networks(info)
    nets = agent.build_networks(info)
    assert {k: id(v) for k, v in vars(agent).items()} == before and agent.bonus is bonus
    assert set(meta) == set(nets) == {"main", "rnd_target", "rnd_predictor"}
    assert all(p.device.type == "meta" for p in meta["rnd_predictor"].parameters())
    assert bonus.reward.obs_norm.rms.count == 0 and bonus.leaf == "obs"
    env.close()


def test_ppo_and_rnd_ppo_share_a_base_rather_than_one_extending_the_other():
    assert not issubclass(PPO, RNDPPO) and not issubclass(RNDPPO, PPO)
    assert PPO.__bases__ == RNDPPO.__bases__ == (OnPolicyActorCritic,)
    ppo, rnd = PPO(tiny(Path("unused"), intrinsic=False)), RNDPPO(tiny(Path("unused")))
    assert set(ppo.heads()) == {"logits", "value_ext"}
    assert set(rnd.heads()) == {"logits", "value_ext", "value_int"}


class _Watched(RNDPPO):
    """Keeps a copy of the target and predictor weights as training starts."""

    def start(self, ctx):
        super().start(ctx)
        self.networks = ctx.learner.networks
        self.at_start = {
            k: {n: t.clone() for n, t in ctx.learner.networks[k].state_dict().items()}
            for k in ("rnd_target", "rnd_predictor")
        }


def test_target_network_never_changes(tmp_path):
    from agents.core.run import train

    agent = _Watched(tiny(tmp_path / "run", env="MiniGrid-Empty-5x5-v0", total_env_steps=128))
    train(agent)
    final = load_checkpoint(tmp_path / "run" / "checkpoints" / "final.pt")["networks"]
    for name, t in agent.at_start["rnd_target"].items():
        assert torch.equal(final["rnd_target"][name], t), name
    assert all(not p.requires_grad for p in agent.networks["rnd_target"].parameters())
    moved = [not torch.equal(final["rnd_predictor"][n], t)
             for n, t in agent.at_start["rnd_predictor"].items()]  # fmt: skip
    assert any(moved)  # the predictor did learn


def test_minigrid_rnd_reads_the_image_leaf(tmp_path):
    from agents.core.run import train

    agent = RNDPPO(tiny(tmp_path / "run", env="MiniGrid-Empty-5x5-v0"))
    train(agent)
    assert agent.bonus.leaf == "image" and agent.bonus.reward.shape == (7, 7, 3)
    stats = agent.bonus.reward.obs_norm.rms
    assert stats.count > 8 and np.all(stats.var >= 0)


def test_rnd_leaf_choice_errors_name_the_flag(tmp_path):
    import pytest

    from agents.core.agent import EnvInfo
    from agents.core.preprocess import make_preprocessor
    from demostudio.episode import make_env

    env = make_env("MiniGrid-Empty-5x5-v0", {})
    info = EnvInfo("MiniGrid-Empty-5x5-v0", env, make_preprocessor(env.observation_space))
    cfg = tiny(tmp_path, env="MiniGrid-Empty-5x5-v0", rnd_leaf="nope")
    with pytest.raises(ValueError, match="--rnd-leaf: expected one of"):
        rnd_leaf(cfg, info)
    env.close()


def test_cli_train_and_evaluate(tmp_path, capsys):
    from demostudio.cli import main

    run = tmp_path / "cli"
    args = ["train", "ppo", "--env", "CartPole-v1", "--run-dir", str(run), "--num-envs", "2",
            "--rollout-length", "8", "--segment-length", "8", "--num-minibatches", "1",
            "--total-env-steps", "32", "--hidden", "8", "--lstm", "8", "--no-progress",
            "--no-tensorboard", "--eval-every", "0"]  # fmt: skip
    assert main(args) == 0
    assert "ppo:" in capsys.readouterr().out
    assert main(["evaluate", str(run), "--episodes", "1", "--device", "cpu"]) == 0
    assert "mean return" in capsys.readouterr().out


def test_atari_settings_reach_the_networks(tmp_path):
    """ALE: grey frames resized and stacked for the policy, the last one for RND, rooms in
    the info; evaluation and restore build the same wrapped env."""
    from agents.core.run import train

    cfg = tiny(tmp_path / "run", env="ALE/MontezumaRevenge-v5", frame_resize=42,
               frame_stack=3, rnd_frame_stack=1, total_env_steps=32, eval_every=32,
               max_episode_frames=400)  # fmt: skip
    agent = RNDPPO(cfg)
    result = train(agent)
    assert agent.bonus.reward.shape == (1, 42, 42)
    spec = load_checkpoint(result.run_dir / "checkpoints" / "final.pt")["network_specs"]["main"]
    assert spec["obs_spec"]["obs"] == {"kind": "frame", "shape": [3, 42, 42], "n": 0}
    restored = restore_agent(result.run_dir, seed=0)
    env = restored.make_env()
    obs, info = env.reset(seed=0)
    assert obs.shape == (3, 42, 42) and "room" in info
    assert env.unwrapped.ale.getFloat("repeat_action_probability") == 0.25
    env.close()


def test_target_rollout_return_ends_training(tmp_path):
    result = get_algorithm("ppo").train(
        tiny(tmp_path / "run", intrinsic=False, total_env_steps=10_000, target_rollout_return=5.0)
    )
    assert result.env_steps < 100  # CartPole episodes last > 5 steps: the first rollout
    assert rows(result.run_dir, "target_reached")[0]["rollout_return"] >= 5.0


def test_epsilon_greedy_stores_the_mixture_log_probability():
    from agents.core.networks import LSTMState, NetworkOutput

    logits = torch.tensor([[[10.0, -10.0, -10.0]] * 4])  # pi almost surely action 0
    out = NetworkOutput({"logits": logits, "value_ext": torch.zeros(1, 4)}, LSTMState(None, None))
    selector = PPO(tiny(Path("unused"), intrinsic=False, epsilon_greedy=0.3)).acting_selector(4)
    step = selector(out, np.random.default_rng(0))
    mu = np.where(step.action == 0, 0.7 + 0.1, 0.1)
    assert np.allclose(np.exp(step.extras["log_prob"]), mu, atol=1e-4)
    assert step.extras["env"].tolist() == [0, 1, 2, 3] and "value_ext" in step.extras

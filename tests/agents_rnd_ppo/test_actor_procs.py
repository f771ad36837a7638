"""`demostudio train rnd-ppo --actor-procs 2`: the rollouts come from two Ray actor
processes (a local Ray with 2 CPUs), each with --num-envs envs, and the intrinsic return
follows every env of the pool by its pool-wide index."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agents.rnd_ppo import RNDPPOConfig
from agents.rnd_ppo.agent import RNDPPO

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def local_ray():
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_behaviour_parts_keep_pool_wide_env_indices():
    whole = RNDPPO(RNDPPOConfig(epsilon_greedy=0.1, intrinsic=False)).acting_selector(6)
    parts = [whole.part(k * 3, k * 3 + 3) for k in range(2)]
    np.testing.assert_array_equal(np.concatenate([p.env_index for p in parts]), np.arange(6))
    assert float(parts[1].epsilons) == 0.1 and parts[1].values == ("value_ext",)


def test_cli_ppo_with_actor_procs_trains_through_ray(local_ray, tmp_path):
    from demostudio.cli import main

    run = tmp_path / "cli"
    rc = main(["train", "ppo", "--env", "CartPole-v1", "--actor-procs", "2", "--num-envs", "1",
               "--actor-chunk-steps", "8", "--rollout-length", "16", "--segment-length", "8",
               "--num-minibatches", "1", "--update-epochs", "1", "--hidden", "16", "--lstm",
               "16", "--total-env-steps", "64", "--eval-every", "0", "--eval-episodes", "1",
               "--no-progress", "--no-tensorboard", "--run-dir", str(run)])  # fmt: skip
    assert rc == 0 and (run / "checkpoints" / "final.pt").exists()
    lines = (run / "metrics.jsonl").read_text().splitlines()
    train_rows = [r for r in map(json.loads, lines) if r["kind"] == "train"]
    assert train_rows and "policy_lag" in train_rows[-1]  # only the Ray pool reports it


class _Seen(RNDPPO):
    """Records the env indices and actor pids of every rollout."""

    def __init__(self, cfg):
        super().__init__(cfg)
        self.envs: set[int] = set()
        self.pids: list[int] = []

    def on_rollout(self, ctx, batch):
        self.envs |= set(batch.extras["env"][:, 0].astype(int).tolist())
        self.pids = list(ctx.pool().pids)
        return super().on_rollout(ctx, batch)


def test_rnd_ppo_trains_through_two_ray_actor_processes(local_ray, tmp_path):
    import os

    from agents.core.run import train

    cfg = RNDPPOConfig(
        env="CartPole-v1", run_dir=tmp_path / "run", actor_procs=2, num_envs=2,
        actor_chunk_steps=8, rollout_length=16, segment_length=8, num_minibatches=2,
        update_epochs=1, hidden=16, lstm=16, rnd_embed_dim=16, rnd_hidden=16,
        obs_norm_init_steps=4, total_env_steps=192, eval_every=0, eval_episodes=1,
        checkpoint_every=1000, progress=False, tensorboard=False,
    )  # fmt: skip
    assert cfg.total_envs == 4 and cfg.minibatch_size == 4
    agent = _Seen(cfg)
    result = train(agent)
    assert result.env_steps >= 192 and result.updates > 0
    assert agent.envs == {0, 1, 2, 3}  # both processes' envs, by pool-wide index
    assert len(agent.pids) == 2 and os.getpid() not in agent.pids
    lines = (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()
    train_rows = [r for r in map(json.loads, lines) if r["kind"] == "train"]
    assert train_rows and all(r["intrinsic_reward"] > 0 for r in train_rows)
    assert "policy_lag" in train_rows[-1]

"""The in-process actor steps its envs as Gymnasium's SyncVectorEnv does and takes new
weights in place."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

from agents.core.actor import VectorActor
from agents.core.networks import RecurrentQNetwork
from agents.core.policy import BatchPolicy, EpsilonGreedy
from agents.core.preprocess import make_preprocessor
from agents.core.sequences import EndBehavior
from demostudio.episode import make_env


def actor(env_id: str, n: int, seed: int = 3) -> VectorActor:
    env = make_env(env_id)
    pre = make_preprocessor(env.observation_space)
    net = RecurrentQNetwork(pre.spec, int(env.action_space.n), hidden=16, lstm=8)
    policy = BatchPolicy.copy_of(net, EpsilonGreedy(np.ones(n)), n, torch.device("cpu"),
                                 np.random.default_rng(0))  # fmt: skip
    return VectorActor([lambda: make_env(env_id)] * n, policy, pre, 6, 3, EndBehavior.ZERO_PAD,
                       seed=seed)  # fmt: skip


@pytest.mark.parametrize("env_id", ["CartPole-v1", "MiniGrid-Empty-5x5-v0"])
def test_envs_step_and_reset_as_sync_vector_env(env_id):
    """Same observations, rewards and flags, with each env reset on the step after its
    episode ended (reward 0, neither flag), over several episodes of every env."""
    n = 3
    ours = actor(env_id, n)
    ref = gym.vector.SyncVectorEnv([lambda: make_env(env_id)] * n)
    obs, _ = ref.reset(seed=3)
    pre = ours.preprocess
    for k, v in pre(obs).items():
        np.testing.assert_array_equal(ours._obs[k], v)
    rng = np.random.default_rng(1)
    autoreset, ends = np.zeros(n, bool), 0
    for _ in range(300):
        actions = rng.integers(0, ref.single_action_space.n, n)
        ours._autoreset = autoreset
        got = ours._step_envs(actions)
        want = ref.step(actions)
        for k, v in pre(want[0]).items():
            np.testing.assert_array_equal(pre(got[0])[k], v)
        for a, b in zip(got[1:], want[1:4]):
            np.testing.assert_array_equal(a, b)
            assert a.dtype == b.dtype
        autoreset = want[2] | want[3]
        ends += int(autoreset.sum())
    assert ends >= 2 * n
    ours.close()


def test_update_weights_copies_in_place_and_refuses_other_weights():
    a = actor("CartPole-v1", 2)
    other = RecurrentQNetwork(a.preprocess.spec, 2, hidden=16, lstm=8)
    a.update_weights(other.state_dict(), 7)
    assert a.policy.version == 7
    for k, v in a.policy.network.state_dict().items():
        torch.testing.assert_close(v, other.state_dict()[k], rtol=0, atol=0)
    assert a.step().env_steps == 2  # acts with them
    wider = RecurrentQNetwork(a.preprocess.spec, 2, hidden=16, lstm=12)
    with pytest.raises(RuntimeError, match="size mismatch"):
        a.update_weights(wider.state_dict(), 8)
    assert a.policy.version == 7


def test_policy_state_is_read_only_and_never_written_in_place():
    """The numpy state the policy hands out (stored with sequences without a copy) keeps
    its values through later steps and resets."""
    a = actor("CartPole-v1", 2)
    for _ in range(3):
        a.step()
    h, c = a.policy.numpy_state()
    kept = h.copy(), c.copy()
    assert not h.flags.writeable and not c.flags.writeable
    for _ in range(30):  # episodes end: their slots are reset
        a.step()
    a.policy.reset()
    np.testing.assert_array_equal(h, kept[0])
    np.testing.assert_array_equal(c, kept[1])
    assert not np.array_equal(a.policy.numpy_state()[0], kept[0])


@pytest.mark.parametrize("epsilon", [0.0, 0.5, 1.0])
def test_one_env_selection_draws_what_the_batched_one_does(epsilon):
    """One env: scalar draws from the generator, the same numbers as the arrays of n."""
    select = EpsilonGreedy(np.array([epsilon]))
    ours, ref = np.random.default_rng(7), np.random.default_rng(7)
    scores = np.random.default_rng(1).normal(size=(50, 1, 3)).astype(np.float32)
    for s in scores:
        got = select.select_numpy({"q": s}, ours).action
        explore = ref.random(1) < epsilon
        want = np.where(explore, ref.integers(0, 3, 1), s.argmax(-1))
        assert got.dtype == np.int64 and got.tolist() == want.tolist()


def test_policy_acts_with_moved_weights():
    """``share_memory()`` moves the network's tensors: the policy's numpy step follows them
    (the weights written after the move are the ones it acts with)."""
    a = actor("CartPole-v1", 2)
    policy, obs = a.policy, a._obs
    policy.step_network(obs)
    policy.network.share_memory()
    with torch.no_grad():
        for p in policy.network.parameters():
            p.mul_(-1.5)
    state = policy.state
    got = policy.step_network(obs).heads["q"]
    with torch.no_grad():
        want, _ = policy.network.torso(
            {k: torch.from_numpy(v)[None] for k, v in obs.items()},
            torch.from_numpy(policy.prev_action)[None],
            torch.from_numpy(policy.prev_reward)[None],
            state,
        )
        want = policy.network.head_outputs(want)["q"]
    torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-4)

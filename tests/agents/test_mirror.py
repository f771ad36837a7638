"""--mirror env: a network exactly symmetric under the env's reflection, the known reflections
true to their envs' dynamics, and a reflection read from a file checked like any input."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

from agents.core.mirror import REFLECTIONS, Reflection, env_reflection
from agents.core.networks import HeadSpec, LSTMState, NetworkSpec, RecurrentNetwork
from agents.core.preprocess import Leaf, make_preprocessor

CARTPOLE = REFLECTIONS["CartPole"]
HEADS = {
    "logits": HeadSpec("logits"),
    "critic": HeadSpec("distributional_q", atoms=7),
    "q": HeadSpec("dueling_q"),
    "value": HeadSpec("value"),
}


def _network(reflection: Reflection, obs_size: int, actions: int, recurrent: bool):
    torch.manual_seed(0)
    spec = NetworkSpec({"obs": Leaf("vector", (obs_size,))}, actions, 16, 8, recurrent, HEADS,
                       mirror=reflection)  # fmt: skip
    return RecurrentNetwork(spec)


def _mirror_actions(heads: dict, perm: tuple[int, ...]) -> dict:
    idx = torch.tensor(perm)
    return {
        "logits": heads["logits"].index_select(-1, idx),
        "critic": heads["critic"].index_select(-2, idx),
        "q": heads["q"].index_select(-1, idx),
        "value": heads["value"],
    }


@pytest.mark.parametrize("name", sorted(REFLECTIONS))
@pytest.mark.parametrize("recurrent", [True, False], ids=["lstm", "feedforward"])
def test_the_network_is_exactly_symmetric(name, recurrent):
    """out(M history) = P out(history) for random weights and a random history: over a whole
    sequence with a burn-in, and step by step from the state that sequence left."""
    r = REFLECTIONS[name]
    n, k = len(r.obs_perm), len(r.action_perm)
    net = _network(r, n, k, recurrent)
    t, b = 6, 3
    obs = torch.randn(t, b, n)
    prev = torch.randint(-1, k, (t, b))
    reward = torch.randn(t, b)
    state = net.initial_state(b)
    assert state.h.shape == (b, 16)  # the two streams' states side by side
    seen = net({"obs": obs}, prev, reward, state, burn_in=2)
    mirrored = net({"obs": r.observe(obs)}, r.actions(prev), reward, state, burn_in=2)
    want = _mirror_actions(seen.heads, r.action_perm)
    for head, value in mirrored.heads.items():
        torch.testing.assert_close(value, want[head], rtol=0, atol=1e-5)
    # one step at a time (the acting path) continues both exactly
    s1, s2 = seen.state, mirrored.state
    for _ in range(3):
        o = torch.randn(1, b, n)
        a = torch.randint(0, k, (1, b))
        one = net({"obs": o}, a, reward[:1], s1)
        two = net({"obs": r.observe(o)}, r.actions(a), reward[:1], s2)
        want = one.heads["logits"][..., list(r.action_perm)]
        torch.testing.assert_close(two.heads["logits"], want, rtol=0, atol=1e-5)
        s1, s2 = one.state, two.state
    # at a state that is its own mirror image, the policy cannot prefer an action to its image
    if name == "CartPole":
        still = net({"obs": torch.zeros(1, b, n)}, torch.full((1, b), -1), torch.zeros(1, b),
                    net.initial_state(b))  # fmt: skip
        logits = still.heads["logits"][0]
        torch.testing.assert_close(logits[:, 0], logits[:, 1], rtol=0, atol=1e-6)


def test_the_network_is_the_mean_of_the_plain_network_and_its_mirror_image():
    """out(s) = (F(s) + P F(M s)) / 2 with F the same weights without the mirror, each stream
    on its own half of the state, over a sequence with a burn-in and fresh rows."""
    net = _network(CARTPOLE, 4, 2, True)
    plain = RecurrentNetwork(NetworkSpec({"obs": Leaf("vector", (4,))}, 2, 16, 8, True, HEADS))
    plain.load_state_dict(net.state_dict())
    t, b = 5, 3
    obs, prev, reward = torch.randn(t, b, 4), torch.randint(-1, 2, (t, b)), torch.randn(t, b)
    state = LSTMState(torch.randn(b, 16), torch.randn(b, 16))
    fresh = torch.tensor([True, False, True])
    got = net({"obs": obs}, prev, reward, state, burn_in=2, fresh=fresh)
    one = plain({"obs": obs}, prev, reward, LSTMState(state.h[:, :8], state.c[:, :8]), 2, fresh)
    two = plain({"obs": -obs}, torch.where(prev >= 0, 1 - prev, prev), reward,
                LSTMState(state.h[:, 8:], state.c[:, 8:]), 2, fresh)  # fmt: skip
    want = _mirror_actions(two.heads, (1, 0))
    for head in HEADS:
        torch.testing.assert_close(got.heads[head], (one.heads[head] + want[head]) / 2)
    torch.testing.assert_close(got.state.h, torch.cat([one.state.h, two.state.h], -1))
    torch.testing.assert_close(got.state.c, torch.cat([one.state.c, two.state.c], -1))


def test_gradients_reach_both_streams_and_the_policy_can_be_cut_off():
    net = _network(CARTPOLE, 4, 2, True)
    obs, prev = torch.randn(4, 2, 4), torch.randint(-1, 2, (4, 2))
    feats, _ = net.torso({"obs": obs}, prev, torch.zeros(4, 2), net.initial_state(2))
    assert feats.shape == (4, 2, 16)
    heads = net.head_outputs(feats, detached=("logits",))
    first = net.encoder.encoders["obs"].net[0].weight
    heads["logits"].sum().backward(retain_graph=True)  # the policy head learns, not the torso
    assert first.grad is None and net.heads["logits"].net[0].weight.grad.abs().sum() > 0
    heads["critic"].sum().backward()
    assert first.grad.abs().sum() > 0


def test_cartpole_acrobot_reflections_commute_with_the_dynamics():
    """Stepping the mirror image with the mirrored action lands on the mirror image."""
    rng = np.random.default_rng(0)
    for env_id in ("CartPole-v1", "Acrobot-v1"):
        r = env_reflection(env_id)
        env = gym.make(env_id).unwrapped
        env.reset(seed=0)
        for _ in range(20):
            if env_id == "CartPole-v1":
                s = rng.uniform(-0.2, 0.2, 4)
                mirror_state = -s
            else:
                s = rng.uniform(-1, 1, 4)  # theta1, theta2, their velocities
                mirror_state = -s
            a = int(rng.integers(env.action_space.n))
            env.state = s.copy()
            obs, *_ = env.step(a)
            env.state = mirror_state.copy()
            mobs, *_ = env.step(r.action_perm[a])
            np.testing.assert_allclose(
                mobs, r.observe(torch.as_tensor(obs, dtype=torch.float64)).numpy(), atol=1e-6
            )
        env.close()


def test_known_reflections_fit_their_envs():
    for name, r in REFLECTIONS.items():
        env_id = {"CartPole": "CartPole-v1", "Acrobot": "Acrobot-v1",
                  "LunarLander": "LunarLander-v3"}[name]  # fmt: skip
        env = gym.make(env_id)
        r.check(env.observation_space.shape[0], env.action_space.n)
        pre = make_preprocessor(env.observation_space)
        RecurrentNetwork(NetworkSpec(pre.spec, int(env.action_space.n), mirror=r))
        env.close()


def test_unknown_env_and_bad_observations_are_named():
    with pytest.raises(ValueError, match=r"no known reflection for 'MountainCar-v0'; known: "):
        env_reflection("MountainCar-v0")
    grid = {"image": Leaf("grid", (7, 7, 3)), "direction": Leaf("discrete", (), 4)}
    with pytest.raises(ValueError, match="one vector"):
        RecurrentNetwork(NetworkSpec(grid, 2, mirror=CARTPOLE))
    with pytest.raises(ValueError, match="obs_perm: expected 6 dimensions, got 4"):
        RecurrentNetwork(NetworkSpec({"obs": Leaf("vector", (6,))}, 2, mirror=CARTPOLE))


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"obs_perm": [1, 2, 0], "obs_sign": [1, 1, 1], "action_perm": [0]}, "its own inverse"),
        ({"obs_perm": [0, 0], "obs_sign": [1, 1], "action_perm": [0]}, "a permutation"),
        ({"obs_perm": [1, 0], "obs_sign": [1, -1], "action_perm": [0]}, "equal signs"),
        ({"obs_perm": [0], "obs_sign": [2], "action_perm": [0]}, "each -1 or 1"),
        ({"obs_perm": [0], "obs_sign": [1, 1], "action_perm": [0]}, "expected 1 values"),
        ({"obs_perm": [True], "obs_sign": [1], "action_perm": [0]}, "expected integers"),
        ({"obs_perm": "01", "obs_sign": [1], "action_perm": [0]}, "a list"),
        ({"obs_perm": list(range(5000)), "obs_sign": [1], "action_perm": [0]}, "at most 4096"),
    ],
)
def test_a_reflection_from_a_file_is_checked(bad, message):
    with pytest.raises(ValueError, match=message):
        Reflection.from_json(bad)


def test_the_spec_round_trips_through_json():
    spec = NetworkSpec({"obs": Leaf("vector", (4,))}, 2, 16, 8, True, HEADS, mirror=CARTPOLE)
    back = NetworkSpec.from_json(spec.to_json())
    assert back == spec and back.mirror == CARTPOLE
    plain = NetworkSpec({"obs": Leaf("vector", (4,))}, 2)
    old = {k: v for k, v in plain.to_json().items() if k != "mirror"}  # a file from before
    assert NetworkSpec.from_json(old).mirror is None


@pytest.mark.parametrize("algo", ["reactor", "r2d2", "ppo"])
def test_training_with_mirror_checkpoints_and_restores_a_symmetric_agent(algo, tmp_path):
    """The CLI's --mirror env through a short real run of a value-based, an actor-critic and
    an on-policy agent: the checkpoint records the reflection and the restored network obeys
    it."""
    from agents.core.checkpoint import load_checkpoint
    from agents.core.restore import restore_agent
    from demostudio.cli import main

    run = tmp_path / "run"
    flags = ["--env", "CartPole-v1", "--mirror", "env", "--hidden", "16", "--lstm", "8",
             "--total-env-steps", "400", "--run-dir", str(run), "--no-progress",
             "--no-tensorboard", "--device", "cpu"]  # fmt: skip
    if algo != "ppo":
        flags += ["--num-actors", "2", "--batch-size", "4", "--min-replay", "4"]
    assert main(["train", algo, *flags]) == 0
    saved = load_checkpoint(run)["network_specs"]["main"]["mirror"]
    assert saved == CARTPOLE.to_json()
    net = restore_agent(run).controller._policy.network
    obs = torch.randn(5, 2, 4)
    prev = torch.randint(-1, 2, (5, 2))
    state = net.initial_state(2)
    one = net({"obs": obs}, prev, torch.ones(5, 2), state)
    two = net({"obs": CARTPOLE.observe(obs)}, CARTPOLE.actions(prev), torch.ones(5, 2), state)
    head = next(iter(one.heads))
    torch.testing.assert_close(two.heads[head], one.heads[head][..., [1, 0]], rtol=0, atol=1e-5)

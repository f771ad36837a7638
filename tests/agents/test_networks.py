"""Encoders chosen from the observation space; one preprocessing function for live and demo."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

from agents.core.networks import RecurrentQNetwork
from agents.core.preprocess import Leaf, make_preprocessor, obs_spec
from demostudio.episode import make_env


def test_specs_from_spaces():
    assert obs_spec(gym.spaces.Box(-1, 1, (4,))) == {"obs": Leaf("vector", (4,))}
    atari = gym.spaces.Box(0, 255, (210, 160, 3), np.uint8)
    assert obs_spec(atari) == {"obs": Leaf("frame", (84, 84))}
    minigrid = make_env("MiniGrid-DoorKey-8x8-v0").observation_space
    assert obs_spec(minigrid) == {
        "direction": Leaf("discrete", (), 4),
        "image": Leaf("grid", (7, 7, 3)),
    }  # the mission text is dropped
    with pytest.raises(TypeError, match="expected an observation space"):
        obs_spec(gym.spaces.Graph(gym.spaces.Box(0, 1, (2,)), None))


@pytest.mark.parametrize(
    "space",
    [
        gym.spaces.Box(-1, 1, (4,)),
        gym.spaces.Box(0, 255, (210, 160, 3), np.uint8),
        gym.spaces.Dict(
            {
                "image": gym.spaces.Box(0, 255, (7, 7, 3), np.uint8),
                "direction": gym.spaces.Discrete(4),
            }
        ),
    ],
    ids=["vector", "atari", "minigrid"],
)
def test_network_shapes_and_state(space):
    pre = make_preprocessor(space)
    raw = [space.sample() for _ in range(6)]
    if isinstance(space, gym.spaces.Dict):
        batch = {k: np.stack([r[k] for r in raw]) for k in space.spaces}
    else:
        batch = np.stack(raw)
    processed = pre(batch)
    net = RecurrentQNetwork(pre.spec, 5, hidden=32, lstm=16)
    obs = {k: torch.from_numpy(v).reshape(3, 2, *v.shape[1:]) for k, v in processed.items()}
    out = net(obs, torch.full((3, 2), -1), torch.zeros(3, 2), net.initial_state(2))
    assert out.q.shape == (3, 2, 5) and out.state.h.shape == (2, 16)
    # one call over the sequence == step by step (the LSTM core is exact, no resets inside)
    state, qs = net.initial_state(2), []
    for t in range(3):
        o = net(
            {k: v[t : t + 1] for k, v in obs.items()},
            torch.full((1, 2), -1),
            torch.zeros(1, 2),
            state,
        )
        qs.append(o.q)
        state = o.state
    torch.testing.assert_close(torch.cat(qs), out.q, rtol=1e-5, atol=1e-5)


def test_atari_preprocessing_is_the_same_for_live_and_demo():
    space = gym.spaces.Box(0, 255, (210, 160, 3), np.uint8)
    pre = make_preprocessor(space)
    rng = np.random.default_rng(0)
    frames = rng.integers(0, 256, (4, 210, 160, 3), dtype=np.uint8)
    demo = pre(frames)["obs"]  # a recorded episode's observations, all at once
    live = np.stack([pre.one(f)["obs"] for f in frames])  # one at a time, as an actor sees them
    assert demo.shape == (4, 84, 84) and demo.dtype == np.uint8
    np.testing.assert_array_equal(demo, live)
    flat = np.full((1, 210, 160, 3), 200, np.uint8)
    assert np.all(pre(flat)["obs"] == 200)  # gray of a gray image is itself


def test_grid_mlp_encoder_is_a_linear_map_of_the_one_hot():
    from agents.core.networks import GRID_VALUES, GridMLPEncoder, NetworkSpec, RecurrentNetwork

    leaf = Leaf("grid", (7, 7, 3))
    enc = GridMLPEncoder(leaf, 8)
    x = torch.from_numpy(np.random.default_rng(0).integers(0, 12, (5, 7, 7, 3), dtype=np.uint8))
    # by hand: one-hot each (cell, channel) with the channel's size (values clipped), flatten
    hand = torch.zeros(5, 7 * 7 * sum(GRID_VALUES))
    for n in range(5):
        col = 0
        for cell in x[n].reshape(-1, 3):
            for ch, size in enumerate(GRID_VALUES):
                hand[n, col + min(int(cell[ch]), size - 1)] = 1.0
                col += size
    torch.testing.assert_close(enc(x), enc.net(hand))
    # the spec names the encoder; a spec written before the choice existed reads as conv
    spec = NetworkSpec({"image": leaf}, 3, 8, 8, True, grid_encoder="mlp")
    again = NetworkSpec.from_json(spec.to_json())
    assert again.grid_encoder == "mlp"
    assert isinstance(RecurrentNetwork(again).encoder.encoders["image"], GridMLPEncoder)
    old = {k: v for k, v in spec.to_json().items() if k != "grid_encoder"}
    assert NetworkSpec.from_json(old).grid_encoder == "conv"
    with pytest.raises(ValueError, match="grid_encoder"):
        NetworkSpec.from_json({**old, "grid_encoder": "transformer"})


def test_bounded_vector_dimensions_reach_the_network_in_minus_one_to_one():
    from agents.core.networks import VectorEncoder
    from agents.core.preprocess import spec_from_json, spec_to_json

    space = make_env("MountainCar-v0").observation_space  # position [-1.2, 0.6], speed 0.07
    leaf = obs_spec(space)["obs"]
    assert leaf.center == pytest.approx((-0.3, 0.0)) and leaf.half == pytest.approx((0.9, 0.07))
    enc = VectorEncoder(leaf, 8)
    corners = torch.tensor([[-1.2, -0.07], [0.6, 0.07]])
    torch.testing.assert_close(
        (corners - enc.center) * enc.inv_half, torch.tensor([[-1.0, -1.0], [1.0, 1.0]])
    )
    # unbounded dimensions pass as they are (CartPole's velocities)
    cart = obs_spec(make_env("CartPole-v1").observation_space)["obs"]
    assert cart.center[1] == 0.0 and cart.half[1] == 1.0 and cart.half[0] == pytest.approx(4.8)
    # kept in checkpoints; a spec written before has none (no scaling); a hostile one fails
    assert spec_from_json(spec_to_json({"obs": leaf}))["obs"].half == leaf.half
    old = {"obs": {"kind": "vector", "shape": [2], "n": 0}}
    assert not VectorEncoder(spec_from_json(old)["obs"], 8).scaled
    for bad in ({"center": [0.0], "half": [1.0]}, {"center": [0.0, 0.0], "half": [1.0, 0.0]}):
        with pytest.raises(ValueError, match="center/half"):
            spec_from_json({"obs": {**old["obs"], **bad}})
    # demos and env still match on kind and shape only
    assert leaf == type(leaf)("vector", (2,))


def test_grid_mlp_encoder_without_a_graph_gives_the_one_hot_layers_values():
    """Acting and target values sum the first layer's weight columns of each cell's values;
    the learning pass multiplies the one-hot: the same numbers up to float rounding, values
    out of a channel's range clipped alike, and the learning pass keeps its gradient."""
    from agents.core.encoders import GridMLPEncoder

    torch.manual_seed(0)
    enc = GridMLPEncoder(Leaf("grid", (7, 7, 3)), 32)
    x = torch.randint(0, 12, (40, 7, 7, 3))
    x[0, 0, 0] = torch.tensor([-2, 99, 3])  # clipped into each channel's range
    learned = enc(x)
    with torch.no_grad():
        acted = enc(x)
    torch.testing.assert_close(acted, learned.detach(), rtol=0, atol=1e-5)
    learned.sum().backward()
    assert enc.net[0].weight.grad is not None and enc.net[0].weight.grad.abs().sum() > 0

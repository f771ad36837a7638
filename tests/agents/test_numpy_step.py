"""The numpy acting step gives what the torch forward gives, on the network's live weights."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from agents.core.networks import HeadSpec, LSTMState, NetworkSpec, RecurrentNetwork
from agents.core.numpy_step import MAX_GATE_PRODUCT
from agents.core.preprocess import Leaf

HEADS = {
    "q": HeadSpec("dueling_q"),
    "logits": HeadSpec("logits"),
    "v": HeadSpec("value"),
    "z": HeadSpec("distributional_q", 5),
}
SCALED = Leaf("vector", (4,), center=(0.0, 0.5, 0.0, -1.0), half=(2.4, 3.0, 0.2, 3.0))


def spec(obs, recurrent=True, **kw) -> NetworkSpec:
    return NetworkSpec(obs, 3, hidden=32, lstm=24, recurrent=recurrent, heads=HEADS, **kw)


def inputs(net: RecurrentNetwork, n: int, rng: np.random.Generator):
    obs = {}
    for k, leaf in net.spec.obs_spec.items():
        if leaf.kind == "discrete":
            obs[k] = torch.from_numpy(rng.integers(0, leaf.n, (1, n)))
        else:
            obs[k] = torch.from_numpy(rng.standard_normal((1, n, *leaf.shape)).astype(np.float32))
    action = torch.from_numpy(rng.integers(-1, 3, (1, n)))  # -1: no previous action
    reward = torch.from_numpy(rng.standard_normal((1, n)).astype(np.float32))
    h, c = (torch.from_numpy(rng.standard_normal((n, 24)).astype(np.float32)) for _ in "hc")
    return obs, action, reward, LSTMState(h, c)


def torch_step(net: RecurrentNetwork, *args):
    """The torch forward of one step (what numpy replaces)."""
    with torch.no_grad():
        out, state = net.torso(*args)
        return net.head_outputs(out), state


def assert_same(net: RecurrentNetwork, n: int, seed: int = 0) -> None:
    args = inputs(net, n, np.random.default_rng(seed))
    assert net.numpy_step() is not None
    with torch.no_grad():
        fast = net(*args)
    heads, state = torch_step(net, *args)
    assert fast.heads.keys() == heads.keys()
    for k, v in heads.items():
        assert fast.heads[k].shape == v.shape and fast.heads[k].dtype == v.dtype
        torch.testing.assert_close(fast.heads[k], v, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(fast.state.h, state.h, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(fast.state.c, state.c, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("n", [1, 5])
@pytest.mark.parametrize(
    "obs",
    [
        {"obs": SCALED},
        {"obs": Leaf("vector", (6,))},
        {"image": Leaf("vector", (3,)), "direction": Leaf("discrete", (), 4)},
    ],
    ids=["scaled", "unscaled", "vector+discrete"],
)
def test_numpy_step_equals_torch(obs, n):
    torch.manual_seed(0)
    assert_same(RecurrentNetwork(spec(obs)), n)


def test_feed_forward_core_equals_torch_and_passes_the_state_through():
    torch.manual_seed(1)
    net = RecurrentNetwork(spec({"obs": SCALED}, recurrent=False))
    assert_same(net, 3)
    args = inputs(net, 3, np.random.default_rng(0))
    with torch.no_grad():
        assert net(*args).state is args[3]


def test_numpy_step_reads_the_weights_live():
    """The arrays are views: a load_state_dict (in place) is seen at once; a copied network
    gets its own views (a deep copy never acts with another network's weights)."""
    torch.manual_seed(2)
    net = RecurrentNetwork(spec({"obs": SCALED}))
    assert_same(net, 2)
    twin = copy.deepcopy(net)
    with torch.no_grad():
        for p in net.parameters():
            p.mul_(-1.5)
    assert_same(net, 2, seed=1)
    assert_same(twin, 2, seed=1)
    args = inputs(net, 2, np.random.default_rng(3))
    with torch.no_grad():
        assert not torch.allclose(net(*args).heads["q"], twin(*args).heads["q"])
    twin.load_state_dict(net.state_dict())
    with torch.no_grad():
        torch.testing.assert_close(net(*args).heads["q"], twin(*args).heads["q"])
    net.share_memory()  # moves the tensors: the step is rebuilt on the new ones
    assert_same(net, 2, seed=4)


def test_torch_runs_what_numpy_does_not_cover():
    torch.manual_seed(3)
    grid = {"image": Leaf("grid", (7, 7, 3)), "direction": Leaf("discrete", (), 4)}
    assert RecurrentNetwork(spec(grid)).numpy_step() is None
    net = RecurrentNetwork(spec({"obs": SCALED}))
    rows = MAX_GATE_PRODUCT // net.numpy_step().width + 1
    assert not net.numpy_step().fits(rows)
    args = inputs(net, rows, np.random.default_rng(0))
    with torch.no_grad():
        out = net(*args)  # the torch path
    heads, _ = torch_step(net, *args)
    torch.testing.assert_close(out.heads["q"], heads["q"])
    # float64 observations: torch's own refusal, not numpy's silent promotion
    with torch.no_grad(), pytest.raises(RuntimeError):
        net({"obs": args[0]["obs"].double()[:, :2]}, args[1][:, :2], args[2][:, :2],
                LSTMState(args[3].h[:2], args[3].c[:2]))  # fmt: skip


def test_steps_with_a_graph_stay_in_torch():
    torch.manual_seed(4)
    net = RecurrentNetwork(spec({"obs": SCALED}))
    out = net(*inputs(net, 2, np.random.default_rng(0)))
    assert out.heads["q"].requires_grad

"""FusedAdam: the numbers of ``torch.optim.Adam(fused=True)``, its checkpoint layout, no
torch._dynamo, and a saved state that does not fit refused whole."""

import subprocess
import sys

import pytest
import torch

from agents.core.adam import FusedAdam, OptimizerStateError


def _nets(seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Tanh(), torch.nn.Linear(7, 3))


def _train(net: torch.nn.Module, opt, steps: int, seed: int = 1) -> None:
    g = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        x = torch.randn(9, 5, generator=g)
        opt.zero_grad(set_to_none=True)
        net(x).pow(2).mean().backward()
        opt.step()


def _groups(net: torch.nn.Module) -> list[dict]:
    first, second = net[0], net[2]
    return [{"params": list(first.parameters())}, {"params": list(second.parameters()), "lr": 3e-3}]


def test_steps_match_torch_adam_fused_bit_for_bit():
    ours_net, torch_net = _nets(0), _nets(0)
    ours = FusedAdam(_groups(ours_net), lr=1e-3, betas=(0.8, 0.999), eps=1e-6)
    theirs = torch.optim.Adam(_groups(torch_net), lr=1e-3, betas=(0.8, 0.999), eps=1e-6, fused=True)
    _train(ours_net, ours, 25)
    _train(torch_net, theirs, 25)
    for a, b in zip(ours_net.parameters(), torch_net.parameters(), strict=True):
        assert torch.equal(a, b)
    # the same layout: each loads the other's state and both go on identically
    mine, its = ours.state_dict(), theirs.state_dict()
    assert mine["param_groups"] == its["param_groups"]
    assert mine["state"].keys() == its["state"].keys()
    for k, s in its["state"].items():
        for name in ("step", "exp_avg", "exp_avg_sq"):
            assert torch.equal(mine["state"][k][name], s[name])
    ours_again = FusedAdam(_groups(ours_net), lr=1.0)
    ours_again.load_state_dict(its)
    assert ours_again.param_groups[1]["lr"] == 3e-3
    theirs.load_state_dict(mine)
    _train(ours_net, ours_again, 5, seed=2)
    _train(torch_net, theirs, 5, seed=2)
    for a, b in zip(ours_net.parameters(), torch_net.parameters(), strict=True):
        assert torch.equal(a, b)


def test_a_schedule_sets_a_groups_learning_rate():
    net = _nets(0)
    opt = FusedAdam([{"params": list(net.parameters())}], lr=1e-3)
    before = [p.detach().clone() for p in net.parameters()]
    opt.param_groups[0]["lr"] = 0.0
    _train(net, opt, 3)
    assert all(torch.equal(a, b) for a, b in zip(before, net.parameters(), strict=True))


@pytest.mark.parametrize(
    "break_it, field",
    [
        (lambda s: s["param_groups"].append(dict(s["param_groups"][0])), "param_groups"),
        (lambda s: s["param_groups"][0]["params"].pop(), "param_groups[0].params"),
        (lambda s: s["state"][0].update(exp_avg=torch.zeros(2, 2)), "state[0].exp_avg"),
        (lambda s: s["state"][0].update(exp_avg_sq="x"), "state[0].exp_avg_sq"),
        (lambda s: s["state"].update({99: s["state"][0]}), "state[99]"),
        (lambda s: s["state"][0].update(step=[1]), "state[0].step"),
    ],
)
def test_a_state_that_does_not_fit_is_refused_whole(break_it, field):
    net = _nets(0)
    opt = FusedAdam([{"params": list(net.parameters())}], lr=1e-3)
    _train(net, opt, 2)
    saved = opt.state_dict()
    break_it(saved)
    kept = {p: {k: v.clone() for k, v in s.items()} for p, s in opt.state.items()}
    with pytest.raises(OptimizerStateError) as err:
        opt.load_state_dict(saved)
    assert err.value.field == field
    for p, s in opt.state.items():
        assert all(torch.equal(s[k], kept[p][k]) for k in s)


def test_training_never_imports_the_compiler():
    code = (
        "import sys, torch\n"
        "from agents.core.adam import FusedAdam\n"
        "net = torch.nn.LSTM(4, 8)\n"
        "opt = FusedAdam([{'params': list(net.parameters())}], lr=1e-3)\n"
        "for _ in range(2):\n"
        "    opt.zero_grad(); net(torch.randn(3, 2, 4))[0].sum().backward(); opt.step()\n"
        "sd = opt.state_dict(); opt.load_state_dict(sd)\n"
        "print('torch._dynamo' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

"""The Reactor's novelty cost (``--novelty-cost``): a step pays
``k * clip(e(x_{t+1}) / ebar - 1, 0, cap)``, the last step of a sequence pays nothing, the
predictor learns what it is shown (so the cost of a state falls as it is replayed), the
statistics resume from a checkpoint, and a short run trains with it."""

from __future__ import annotations

import pytest
import torch

from agents.core.checkpoint import load_checkpoint
from agents.core.preprocess import Leaf
from agents.reactor.novelty import NoveltyCost, input_shape, novelty_input
from demostudio.cli import main
from tests.agents_reactor.test_agent import TINY

SPEC = {"obs": Leaf("vector", (4,), 0)}


def _cost(weight: float = 0.5, cap: float = 4.0) -> NoveltyCost:
    torch.manual_seed(0)
    return NoveltyCost(SPEC, weight, cap, hidden=16, embed=8)


class FixedError:
    """A stand-in for RND's error: each observation's first element."""

    def prediction_error(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, 0]


def test_the_cost_is_the_next_observations_excess_error_clipped():
    nov = _cost(weight=0.5, cap=1.5)
    nov.rnd = FixedError()
    nov.obs_norm = lambda x: x  # identity: the errors as given
    nov.obs_norm.update = lambda x: None
    errors = [1.0, 2.0, 0.5, 12.0, 4.5]  # e(x_0) .. e(x_4) of one sequence
    obs = {"obs": torch.zeros(5, 1, 4)}
    obs["obs"][:, 0, 0] = torch.tensor(errors)
    mask = torch.tensor([1, 1, 1, 1, 0], dtype=torch.bool)[:, None]  # x_4: the bootstrap obs
    terms = nov(obs, mask)
    assert nov.ebar == 4.0  # the first batch's mean over the 5 observed: 20 / 5
    # step t pays for x_{t+1}: 2/4 - 1 < 0, 0.5/4 - 1 < 0, 12/4 - 1 = 2 capped at 1.5,
    # 4.5/4 - 1 = 0.125; the last step has no next observation in the sequence
    torch.testing.assert_close(terms.cost[:, 0], torch.tensor([0.0, 0.0, 0.75, 0.0625, 0.0]))
    assert terms.metrics["novelty_cost"] == pytest.approx((0.75 + 0.0625) / 4)
    assert terms.metrics["novelty_error"] == 4.0
    obs["obs"][:, 0, 0] = 14.0  # the next batch moves ebar 1% towards its mean
    nov(obs, mask)
    assert nov.ebar == pytest.approx(0.99 * 4.0 + 0.01 * 14.0)


def test_padding_after_the_bootstrap_observation_is_neither_learned_nor_counted():
    nov = _cost()
    obs = {"obs": torch.randn(6, 2, 4)}
    obs["obs"][4:, 0] = 1e6  # padding after env 0's episode ended at step 2 (x_3 observed)
    mask = torch.ones(6, 2, dtype=torch.bool)
    mask[3:, 0] = False
    nov(obs, mask)
    assert nov.obs_norm.rms.count == 2 * 6 - 2  # rows 4, 5 of env 0 left out
    assert float(nov.obs_norm.rms.mean.max()) < 10


def test_the_predictor_learns_a_replayed_state_so_its_cost_falls():
    nov = _cost(weight=1.0)
    opt = torch.optim.Adam(nov.rnd.predictor.parameters(), lr=1e-2)
    gen = torch.Generator().manual_seed(1)
    usual = {"obs": torch.randn(20, 8, 4, generator=gen) * 0.1}
    mask = torch.ones(20, 8, dtype=torch.bool)
    for _ in range(150):
        terms = nov(usual, mask)
        opt.zero_grad()
        terms.loss.backward()
        opt.step()
    assert float(terms.cost.mean()) < 0.05  # what it has learned costs (almost) nothing
    strange = {"obs": usual["obs"].clone()}
    strange["obs"][10, 3] = torch.tensor([3.0, -3.0, 3.0, -3.0])  # far from anything replayed
    cost = nov(strange, mask).cost
    assert cost[9, 3] > 0.5  # the step into it pays
    assert cost[9, 3] > 10 * float(cost[:9].max())
    assert all(not p.requires_grad for p in nov.rnd.target.parameters())


def test_inputs_are_leaves_flattened_or_one_image_as_is():
    spec = {"a": Leaf("vector", (3,), 0), "b": Leaf("discrete", (), 5)}
    obs = {"a": torch.ones(2, 3, 3), "b": torch.full((2, 3), 4)}
    x = novelty_input(obs, spec)
    assert x.shape == (2, 3, 4) and input_shape(spec) == (4,)
    assert x[0, 0].tolist() == [1.0, 1.0, 1.0, 4.0]  # leaves in sorted order: a, then b
    image = {"obs": Leaf("frames", (4, 84, 84), 0)}
    assert input_shape(image) == (4, 84, 84)


def test_a_malformed_saved_state_is_refused_naming_the_key():
    nov = _cost()
    with pytest.raises(ValueError, match="novelty: expected keys 'obs_norm' and 'ebar'"):
        nov.load_state_dict({"ebar": 1.0})
    with pytest.raises(ValueError, match="ebar a number >= 0"):
        nov.load_state_dict({"obs_norm": nov.obs_norm.state_dict(), "ebar": float("nan")})
    with pytest.raises(ValueError, match="shape"):
        nov.load_state_dict({"obs_norm": {"mean": torch.zeros(7), "var": torch.ones(7)},
                             "ebar": 1.0})  # fmt: skip


def _flags(run, steps: int) -> list[str]:
    flags = [f"--{k.replace('_', '-')}={v}" for k, v in TINY.items() if not isinstance(v, bool)]
    flags += ["--no-progress", "--no-tensorboard", "--run-dir", str(run)]
    return [*flags, "--novelty-cost", "0.2", "--total-env-steps", str(steps)]


def test_a_short_run_pays_the_cost_checkpoints_it_and_resumes(tmp_path):
    run = tmp_path / "run"
    assert main(["train", "reactor", *_flags(run, 400)]) == 0
    saved = load_checkpoint(run)
    assert saved["config"]["novelty_cost"] == 0.2
    assert {"novelty_target", "novelty_predictor"} <= set(saved["networks"])
    state = saved["agent_state"]["novelty"]
    assert state["ebar"] > 0 and float(state["obs_norm"]["count"]) > 0
    predictor = {k: v.clone() for k, v in saved["networks"]["novelty_predictor"].items()}
    target = saved["networks"]["novelty_target"]
    assert main(["train", "reactor", *_flags(run, 800), "--resume"]) == 0
    again = load_checkpoint(run)
    assert again["counters"]["env_steps"] >= 800
    assert float(again["agent_state"]["novelty"]["obs_norm"]["count"]) > float(
        state["obs_norm"]["count"]
    )  # the statistics went on from the saved ones
    for k, v in again["networks"]["novelty_target"].items():
        torch.testing.assert_close(v, target[k])  # the same random features after the resume
    assert any(not torch.equal(v, predictor[k])
               for k, v in again["networks"]["novelty_predictor"].items())  # fmt: skip
    lr = [g["lr"] for g in again["optimizer"]["param_groups"]]
    assert lr[1] == 5e-4 and lr[0] != 5e-4  # the predictor's rate; main's follows the anneal


@pytest.mark.parametrize(
    "flag, value, expected",
    [
        ("--novelty-cost", "-1", "--novelty-cost: expected >= 0, got -1.0"),
        ("--novelty-cap", "0", "--novelty-cap: expected > 0, got 0.0"),
        ("--novelty-hidden", "0", "--novelty-hidden: expected >= 1, got 0"),
    ],
)
def test_bad_novelty_flags_are_one_clean_line(capsys, flag, value, expected):
    assert main(["train", "reactor", "--env", "CartPole-v1", flag, value]) == 2
    assert expected in capsys.readouterr().err

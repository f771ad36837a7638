"""The agent interface: which methods every algorithm answers, which base each registered
algorithm has, hooks that return what they make instead of changing other parts, and the
wrapper the coach runs an algorithm in (no class built at run time)."""

from __future__ import annotations

import inspect

import pytest

from agents import registry
from agents.coach import CoachedAgent, CoachLink, coached
from agents.core.agent import Agent
from agents.core.wrapper import AgentWrapper
from agents.r2d2 import R2D2
from agents.rnd_ppo.actor_critic import OnPolicyActorCritic

BASES = {
    "r2d2": Agent,
    "r2d3": R2D2,
    "dqfd": R2D2,
    "sqil": R2D2,
    "bc": Agent,
    "reactor": Agent,
    "rnd-ppo": OnPolicyActorCritic,
    "ppo": OnPolicyActorCritic,
}


def _interface() -> list[str]:
    return [n for n, v in vars(Agent).items() if callable(v) and not n.startswith("_")]


def test_the_interface_leaves_only_what_every_algorithm_answers_abstract():
    assert Agent.__abstractmethods__ == {"heads", "loss", "acting_selector", "phases"}
    with pytest.raises(TypeError, match="abstract"):
        Agent(None)


@pytest.mark.parametrize("algo", sorted(BASES))
def test_each_algorithm_has_the_base_it_is(algo):
    assert registry.get_algorithm(algo).agent_cls.__bases__ == (BASES[algo],)


def test_the_wrapper_forwards_every_method_of_the_interface():
    missing = [n for n in _interface() if n not in vars(AgentWrapper)]
    assert missing == []


def test_the_coach_wraps_the_algorithm_without_building_a_class(tmp_path, cartpole_demos):
    entry = registry.get_algorithm("r2d3")
    cfg = entry.config_cls(env="CartPole-v1", demos=(cartpole_demos,), run_dir=tmp_path)
    agent = coached(entry.agent_cls, cfg, CoachLink("r2d3"))
    assert type(agent) is CoachedAgent and type(agent.agent) is entry.agent_cls
    assert agent.name == "r2d3" and agent.cfg is cfg and agent.uses_replay
    assert agent.target_rules().keys() == {"main"}  # the algorithm's own answers
    # every hook the coach adds to still calls the algorithm's
    for hook in ("start", "on_phase_start", "after_iteration", "finish"):
        assert "super()." in inspect.getsource(getattr(CoachedAgent, hook))

"""An agent around another agent (as ``gymnasium.Wrapper`` is an env around an env): every
method of the interface goes to the wrapped agent; a subclass overrides the hooks it adds to
(``demostudio coach`` publishes weights and drains corrections in ``start`` and
``after_iteration``). The wrapper has the wrapped agent's name, config and class attributes,
so its checkpoints are the wrapped algorithm's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np
import torch

from agents.core.agent import Agent, EnvInfo, Phase
from agents.core.batch import Loss
from agents.core.footprint import Sizes
from agents.core.networks import HeadSpec, NetworkSpec
from agents.core.policy import Selector
from agents.core.preprocess import ObsSpec
from agents.core.sequences import SequenceBatch
from agents.core.targets import TargetRule

if TYPE_CHECKING:
    from agents.core.actor import FinishedEpisode
    from agents.core.context import RunContext
    from agents.core.mixing import DataSource


class AgentWrapper(Agent):
    def __init__(self, agent: Agent):
        super().__init__(agent.cfg)
        self.agent = agent
        self.name = agent.name
        self.config_cls = agent.config_cls
        self.acting_network = agent.acting_network
        self.uses_replay = agent.uses_replay
        self.final_eval_always = agent.final_eval_always
        self.resume_by_default = agent.resume_by_default

    def configure(self, env: EnvInfo) -> None:
        self.agent.configure(env)

    def heads(self) -> dict[str, HeadSpec]:
        return self.agent.heads()

    def network_specs(self, env: EnvInfo) -> dict[str, NetworkSpec]:
        return self.agent.network_specs(env)

    def main_spec(self, env: EnvInfo, obs_spec: ObsSpec) -> NetworkSpec:
        return self.agent.main_spec(env, obs_spec)

    def network_obs_spec(self, env: EnvInfo, spec: ObsSpec) -> ObsSpec:
        return self.agent.network_obs_spec(env, spec)

    def build_networks(self, env: EnvInfo) -> dict[str, torch.nn.Module]:
        return self.agent.build_networks(env)

    def target_rules(self) -> dict[str, TargetRule]:
        return self.agent.target_rules()

    def memory_sizes(self, count_demos: bool) -> Sizes:
        return self.agent.memory_sizes(count_demos)

    def param_groups(self, networks: Mapping[str, torch.nn.Module]) -> list[dict] | None:
        return self.agent.param_groups(networks)

    def loss(self) -> Loss:
        return self.agent.loss()

    def make_env(self, render_mode: str | None = None) -> gym.Env:
        return self.agent.make_env(render_mode)

    def build_env(self, render_mode: str | None = None) -> gym.Env:
        return self.agent.build_env(render_mode)

    def acting_selector(self, n: int) -> Selector:
        return self.agent.acting_selector(n)

    def eval_selector(self, epsilon: float) -> Selector:
        return self.agent.eval_selector(epsilon)

    def demo_extras(self, actions: np.ndarray) -> dict[str, np.ndarray]:
        return self.agent.demo_extras(actions)

    def keep_episodes(self) -> bool:
        return self.agent.keep_episodes()

    def sources(self, ctx: RunContext) -> list[DataSource]:
        return self.agent.sources(ctx)

    def phases(self) -> list[Phase]:
        return self.agent.phases()

    def start(self, ctx: RunContext) -> None:
        self.agent.start(ctx)

    def on_phase_start(self, ctx: RunContext, phase: Phase) -> None:
        self.agent.on_phase_start(ctx, phase)

    def on_phase_end(self, ctx: RunContext, phase: Phase) -> None:
        self.agent.on_phase_end(ctx, phase)

    def on_episode(self, ctx: RunContext, episode: FinishedEpisode) -> None:
        self.agent.on_episode(ctx, episode)

    def on_rollout(self, ctx: RunContext, batch: SequenceBatch) -> SequenceBatch:
        return self.agent.on_rollout(ctx, batch)

    def after_iteration(self, ctx: RunContext) -> bool:
        return self.agent.after_iteration(ctx)

    def finish(self, ctx: RunContext) -> None:
        self.agent.finish(ctx)

    def metrics(self, ctx: RunContext) -> dict[str, float]:
        return self.agent.metrics(ctx)

    def eval_metrics(self, ctx: RunContext) -> dict[str, float]:
        return self.agent.eval_metrics(ctx)

    def state_dict(self) -> dict[str, Any]:
        return self.agent.state_dict()

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.agent.load_state_dict(state)


__all__ = ["AgentWrapper"]

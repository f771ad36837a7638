"""The Reactor agent: the core's run shell, actors, sequence replay and learner, with a
policy head and a (distributional) critic head on the shared torso, an acting policy that
samples from pi mixed with uniform and stores mu, a Polyak-averaged copy of the network
(critic target and ACER's average policy) and the Reactor loss. ``--demos`` mixes the
shared demo replay into batches exactly as R2D3 does (:class:`agents.core.demo_mix.DemoMix`);
demo steps carry ``mu = 1`` for the recorded action.

How the off-policy corrections treat demo steps (mu(A|x) = 1 for the recorded action A)::

    Retrace trace   c = lambda * min(c_bar, pi(A|x) / 1) = lambda * pi(A|x)
    beta-LOO        beta = min(c, 1 / mu(A|x)) = 1 (exactly 1/mu: the demonstrated action's
                    term is importance-corrected):
                    G = (R - Q(A)) grad pi(A) + sum_a Q(a) grad pi(a)
    TIS             min(c, pi(A) / 1) = pi(A), and [pi(a) - c mu(a)]_+ = pi(a) for a != A

(details in :mod:`agents.reactor.retrace` and :mod:`agents.reactor.policy_gradient`).
"""

from __future__ import annotations

from functools import partial

import numpy as np

from agents.core.agent import Agent, EnvInfo, Phase, replay_ratio_phase
from agents.core.batch import Loss
from agents.core.config import DemoMixConfig
from agents.core.context import RunContext
from agents.core.demo_buffer import DemoReplaySpec
from agents.core.demo_mix import DemoMix
from agents.core.footprint import Sizes
from agents.core.mirror import has_reflection
from agents.core.mixing import DataSource, LinearSchedule
from agents.core.networks import HeadSpec
from agents.core.policy import EpsilonGreedy, Selector, SoftmaxSample, epsilon_ladder
from agents.core.run import TrainResult, train
from agents.core.targets import Polyak, TargetRule
from agents.reactor.acting import BEHAVIOUR, MU, demo_extras
from agents.reactor.config import ReactorConfig
from agents.reactor.learning import CRITIC, POLICY, reactor_learner_loss
from agents.reactor.support import default_support


class Reactor(Agent):
    name = "reactor"
    config_cls = ReactorConfig
    uses_replay = True

    def __init__(self, cfg: ReactorConfig):
        super().__init__(cfg)
        self.demo_mix = DemoMix(cfg.group(DemoMixConfig)) if cfg.demos else None
        self.num_actions = 0
        self.learning_rate = LinearSchedule(
            cfg.learning_rate, cfg.learning_rate_final, cfg.learning_rate_steps
        )
        """The learner's rate at an env step (``--learning-rate-final``)."""

    def configure(self, env: EnvInfo) -> None:
        """Settle the value support the flags left open: ``--v-min`` / ``--v-max`` from the
        env's reward bounds and step limit (:mod:`agents.reactor.support`); a given value
        wins. The env's number of actions sizes the demo steps' behaviour. ``--mirror auto``
        becomes env where the env has a known reflection, else none."""
        cfg = self.cfg
        self.num_actions = env.num_actions
        if cfg.mirror == "auto":
            cfg.mirror = "env" if has_reflection(env.env_id) else "none"
        if cfg.v_min is None or cfg.v_max is None:
            v_min, v_max = default_support(env.env, cfg.discount, cfg.reward_clip)
            cfg.v_min = v_min if cfg.v_min is None else cfg.v_min
            cfg.v_max = v_max if cfg.v_max is None else cfg.v_max
            if not cfg.v_max > cfg.v_min:
                raise ValueError(
                    f"--v-min/--v-max: expected v_min < v_max, got {cfg.v_min}, {cfg.v_max} "
                    f"(one given, the other the default for --env {env.env_id}); give both"
                )

    @property
    def full_behaviour(self) -> bool:
        """Store the whole mu(.|x) per step (the TIS policy gradient needs it)."""
        return self.cfg.policy_gradient == "tis"

    def heads(self) -> dict[str, HeadSpec]:
        cfg = self.cfg
        critic = (
            HeadSpec("distributional_q", cfg.num_atoms)
            if cfg.distributional
            else HeadSpec("dueling_q")
        )
        return {POLICY: HeadSpec("logits"), CRITIC: critic}

    def target_rules(self) -> dict[str, TargetRule]:
        return {"main": Polyak(1.0 - self.cfg.average_tau)}

    def memory_sizes(self, count_demos: bool) -> Sizes:
        """The critic's atoms size its outputs (when distributional) and name a flag."""
        cfg, sizes = self.cfg, super().memory_sizes(count_demos)
        return sizes._replace(
            widths=(*sizes.widths, ("num_atoms", cfg.num_atoms)),
            outputs_per_action=cfg.num_atoms if cfg.distributional else 1,
        )

    def loss(self) -> Loss:
        return partial(reactor_learner_loss, cfg=self.cfg)

    def acting_selector(self, n: int) -> Selector:
        cfg = self.cfg
        eps = epsilon_ladder(n, cfg.epsilon_base, cfg.epsilon_alpha)
        return SoftmaxSample(POLICY, eps, (MU, BEHAVIOUR) if self.full_behaviour else (MU,))

    def eval_selector(self, epsilon: float) -> Selector:
        if self.cfg.eval_greedy:
            return EpsilonGreedy(np.array([epsilon]), head=POLICY)
        return SoftmaxSample(POLICY, epsilon, (MU,))

    def demo_extras(self, actions: np.ndarray) -> dict[str, np.ndarray]:
        return demo_extras(actions, self.num_actions, self.full_behaviour)

    def phases(self) -> list[Phase]:
        return [replay_ratio_phase(self.cfg)]

    def sources(self, ctx: RunContext) -> list[DataSource]:
        if self.demo_mix is None:
            return []
        return [self.demo_mix.source(DemoReplaySpec.of(self.cfg), ctx)]

    def start(self, ctx: RunContext) -> None:
        self._set_learning_rate(ctx)

    def after_iteration(self, ctx: RunContext) -> bool:
        self._set_learning_rate(ctx)
        return False

    def _set_learning_rate(self, ctx: RunContext) -> None:
        """The optimiser's rate from the schedule at the current env step (a resumed run
        picks it up from its step count)."""
        lr = self.learning_rate(ctx.counters.env_steps)
        for group in ctx.learner.optimizer.param_groups:
            group["lr"] = lr

    def metrics(self, ctx: RunContext) -> dict[str, float]:
        out = {"learning_rate": self.learning_rate(ctx.counters.env_steps)}
        if self.demo_mix is not None:
            out.update(self.demo_mix.metrics(ctx.counters.env_steps))
        return out


def train_reactor(cfg: ReactorConfig) -> TrainResult:
    return train(Reactor(cfg))


__all__ = ["Reactor", "train_reactor"]

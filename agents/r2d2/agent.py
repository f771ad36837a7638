"""R2D2 (Kapturowski et al. 2019): recurrent Q-learning on sequences from a prioritized
agent replay. ``main`` has a dueling ``q`` head and a hard-copied target; the actors act
epsilon-greedily on an Ape-X ladder of epsilons; one phase trains at a fixed replay ratio.
R2D3, DQfD and SQIL extend it."""

from __future__ import annotations

from functools import partial

from agents.core.agent import Agent, EnvInfo, Phase, replay_ratio_phase
from agents.core.batch import Loss
from agents.core.mirror import has_reflection
from agents.core.networks import HeadSpec
from agents.core.policy import EpsilonGreedy, Selector, epsilon_ladder
from agents.core.run import TrainResult, train
from agents.core.targets import HardCopy, TargetRule
from agents.r2d2.config import R2D2Config
from agents.r2d2.learning import r2d2_loss


class R2D2(Agent):
    name = "r2d2"
    config_cls = R2D2Config
    uses_replay = True

    def configure(self, env: EnvInfo) -> None:
        """``--mirror auto`` becomes env where the env has a known reflection, else none."""
        if self.cfg.mirror == "auto":
            self.cfg.mirror = "env" if has_reflection(env.env_id) else "none"

    def heads(self) -> dict[str, HeadSpec]:
        return {"q": HeadSpec("dueling_q")}

    def target_rules(self) -> dict[str, TargetRule]:
        return {"main": HardCopy(self.cfg.target_update_every)}

    def loss(self) -> Loss:
        return partial(r2d2_loss, cfg=self.cfg)

    def acting_selector(self, n: int) -> Selector:
        return EpsilonGreedy(epsilon_ladder(n, self.cfg.epsilon_base, self.cfg.epsilon_alpha))

    def phases(self) -> list[Phase]:
        return [replay_ratio_phase(self.cfg)]


def train_r2d2(cfg: R2D2Config) -> TrainResult:
    return train(R2D2(cfg))


__all__ = ["R2D2", "train_r2d2"]

"""R2D3: R2D2's learner and loss, plus the demo mix (and optionally an episode memory of
the best agent episodes) as extra data sources, and DQfD's large-margin loss on the demo
steps when --lambda-margin > 0."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from agents.core.actor import FinishedEpisode
from agents.core.agent import EnvInfo
from agents.core.batch import Loss
from agents.core.config import DemoMixConfig
from agents.core.context import RunContext
from agents.core.demo_buffer import DemoReplaySpec
from agents.core.demo_mix import DemoMix
from agents.core.footprint import Sizes, Store
from agents.core.mixing import DataSource
from agents.core.replay import PrioritizedSequenceReplay
from agents.core.run import TrainResult, train
from agents.r2d2.agent import R2D2
from agents.r2d2.learning import r2d2_loss
from agents.r2d3.config import R2D3Config, default_margin_weight
from agents.r2d3.memory import EpisodeMemory


class R2D3(R2D2):
    name = "r2d3"
    config_cls = R2D3Config

    def __init__(self, cfg: R2D3Config):
        super().__init__(cfg)
        self.demo_mix = DemoMix(cfg.group(DemoMixConfig))
        self.memory: EpisodeMemory | None = None

    def configure(self, env: EnvInfo) -> None:
        super().configure(env)
        if self.cfg.lambda_margin is None:
            self.cfg.lambda_margin = default_margin_weight(env.preprocess.spec)

    def loss(self) -> Loss:
        weight = self.cfg.lambda_margin or 0.0  # None: configure() not called (no env yet)
        return partial(r2d2_loss, cfg=self.cfg, margin_weight=weight, margin=self.cfg.margin)

    def keep_episodes(self) -> bool:
        return self.cfg.episode_memory_ratio > 0

    def memory_sizes(self, count_demos: bool) -> Sizes:
        sizes = super().memory_sizes(count_demos)
        if not self.cfg.episode_memory_ratio:
            return sizes
        capacity = self.cfg.episode_memory_capacity
        memory = Store("the episode memory", f"--episode-memory-capacity {capacity}", capacity)
        return sizes._replace(stores=(*sizes.stores, memory))

    def sources(self, ctx: RunContext) -> list[DataSource]:
        cfg = self.cfg
        sources = [self.demo_mix.source(DemoReplaySpec.of(cfg), ctx)]
        if cfg.episode_memory_ratio > 0:
            buf = PrioritizedSequenceReplay(
                cfg.episode_memory_capacity, cfg.priority_alpha, cfg.priority_beta,
                cfg.priority_eta, cfg.seed + 12, "episode memory", kind=cfg.episode_memory_kind,
            )  # fmt: skip
            self.memory = EpisodeMemory(buf)
            ratio = cfg.episode_memory_ratio
            sources.append(
                DataSource("episode memory", buf, lambda _t: ratio, min_size=cfg.batch_size)
            )
        return sources

    def on_episode(self, ctx: RunContext, episode: FinishedEpisode) -> None:
        if self.memory is not None:
            self.memory.offer(episode)

    def state_dict(self) -> dict[str, Any]:
        if self.memory is None:
            return {}
        return {
            "episode_memory_best": self.memory.best,
            "episode_memory_episodes": self.memory.episodes,
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        # only with its buffer restored: a best return without the episodes behind it
        # would keep the memory empty
        if (
            self.memory is not None
            and len(self.memory.buffer)
            and "episode_memory_episodes" in state
        ):
            best = state.get("episode_memory_best")
            self.memory.best = None if best is None else float(best)
            self.memory.episodes = int(state["episode_memory_episodes"] or 0)

    def metrics(self, ctx: RunContext) -> dict[str, float]:
        out = self.demo_mix.metrics(ctx.counters.env_steps)
        if self.memory is not None and self.memory.best is not None:
            out["episode_memory_best"] = self.memory.best
        return out


def train_r2d3(cfg: R2D3Config) -> TrainResult:
    return train(R2D3(cfg))


__all__ = ["R2D3", "train_r2d3"]

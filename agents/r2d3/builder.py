"""R2D3 wiring: R2D2's learner and loss, plus a demo replay (and optionally an episode
memory of the best agent episodes) mixed into batches per element."""

from __future__ import annotations

from agents.core.actor import FinishedEpisode
from agents.core.algorithm import Algorithm
from agents.core.demos import build_demo_replay
from agents.core.mixing import LinearSchedule, MixSource
from agents.core.replay import PrioritizedSequenceReplay
from agents.core.trainer import TrainContext, TrainResult, train
from agents.r2d3.config import R2D3Config


class EpisodeMemory:
    """Keeps the sequences of agent episodes whose return ties or beats the best so far."""

    def __init__(self, buffer: PrioritizedSequenceReplay):
        self.buffer = buffer
        self.best: float | None = None
        self.episodes = 0

    def offer(self, episode: FinishedEpisode) -> bool:
        if episode.sequences is None:
            return False
        if self.best is not None and episode.total_return < self.best:
            return False
        self.best = episode.total_return
        self.buffer.add(episode.sequences)
        self.episodes += 1
        return True


class R2D3(Algorithm):
    name = "r2d3"

    def __init__(self, cfg: R2D3Config):
        self.cfg = cfg
        self.schedule = LinearSchedule(cfg.demo_ratio, cfg.demo_ratio_final, cfg.demo_ratio_steps)
        self.memory: EpisodeMemory | None = None
        self.demo_buffer: PrioritizedSequenceReplay | None = None

    def keep_episodes(self) -> bool:
        return self.cfg.episode_memory_ratio > 0

    def extra_sources(self, ctx: TrainContext) -> list[MixSource]:
        cfg = self.cfg
        self.demo_buffer = build_demo_replay(cfg, ctx)
        sources = [MixSource(self.demo_buffer, self.schedule)]
        if cfg.episode_memory_ratio > 0:
            buf = PrioritizedSequenceReplay(
                cfg.episode_memory_capacity,
                cfg.priority_alpha,
                cfg.priority_beta,
                cfg.priority_eta,
                cfg.seed + 12,
                "episode memory",
            )
            self.memory = EpisodeMemory(buf)
            ratio = cfg.episode_memory_ratio
            sources.append(MixSource(buf, lambda _t: ratio, min_size=cfg.batch_size))
        return sources

    def on_episode(self, ctx: TrainContext, episode: FinishedEpisode) -> None:
        if self.memory is not None:
            self.memory.offer(episode)

    def state_dict(self) -> dict[str, float | int | None]:
        if self.memory is None:
            return {}
        return {
            "episode_memory_best": self.memory.best,
            "episode_memory_episodes": self.memory.episodes,
        }

    def load_state_dict(self, state: dict[str, float | int | None]) -> None:
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

    def metrics(self, ctx: TrainContext, env_steps: int) -> dict[str, float]:
        out = {"demo_ratio": self.schedule(env_steps)}
        if self.memory is not None and self.memory.best is not None:
            out["episode_memory_best"] = self.memory.best
        return out


def train_r2d3(cfg: R2D3Config) -> TrainResult:
    return train(cfg, R2D3(cfg))


__all__ = ["R2D3", "EpisodeMemory", "train_r2d3"]

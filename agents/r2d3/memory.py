"""R2D3's episode memory: the sequences of the best agent episodes so far."""

from __future__ import annotations

from agents.core.actor import FinishedEpisode
from agents.core.replay import PrioritizedSequenceReplay


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


__all__ = ["EpisodeMemory"]

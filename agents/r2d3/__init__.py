"""R2D3: R2D2 plus a demo replay mixed into batches (and an optional episode memory)."""

from agents.r2d3.agent import R2D3, train_r2d3
from agents.r2d3.config import R2D3Config
from agents.r2d3.memory import EpisodeMemory

__all__ = ["R2D3", "EpisodeMemory", "R2D3Config", "train_r2d3"]

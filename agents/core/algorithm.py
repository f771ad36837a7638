"""What an algorithm plugs into the shared trainer: its name, its loss, the extra replay
sources mixed into batches, and what it does with finished agent episodes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agents.core.losses import LossFn, r2d2_loss

if TYPE_CHECKING:
    from agents.core.actor import FinishedEpisode
    from agents.core.mixing import MixSource
    from agents.core.trainer import TrainContext


class Algorithm:
    """The base algorithm is plain recurrent replay (R2D2); subclasses add to it."""

    name = "r2d2"
    loss_fn: LossFn = staticmethod(r2d2_loss)

    def keep_episodes(self) -> bool:
        """Whether actors should hand over each finished episode's sequences."""
        return False

    def extra_sources(self, ctx: TrainContext) -> list[MixSource]:
        """Buffers mixed into batches besides the agent replay."""
        return []

    def on_episode(self, ctx: TrainContext, episode: FinishedEpisode) -> None:
        """Called for every finished agent episode."""

    def metrics(self, ctx: TrainContext, env_steps: int) -> dict[str, float]:
        """Extra scalars for the training log."""
        return {}

    def state_dict(self) -> dict[str, float | int | None]:
        """Plain numbers the algorithm needs back on --resume (saved in checkpoints)."""
        return {}

    def load_state_dict(self, state: dict[str, float | int | None]) -> None:
        """Restore what :meth:`state_dict` gave."""


__all__ = ["Algorithm"]

"""The config group of how episodes are cut into sequences."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from agents.core.config.base import ConfigGroup, require


@dataclass
class SequenceConfig(ConfigGroup):
    """How episodes are cut into sequences (see agents.core.sequences)."""

    # --- algorithm -------------------------------------------------------------------------
    burn_in: int = 10
    """Steps at the start of each sequence used only to refresh the stored LSTM state."""
    trace: int = 20
    """Steps of each sequence that are learned from (sequence = burn_in + trace + 1)."""
    period: int = 10
    """A new sequence starts every this many steps (overlap = length - period)."""
    end_behavior: Literal["zero_pad", "align_end"] = "zero_pad"
    """Sequences at an episode end: zero-padded, or moved back to end on the last step."""

    @property
    def sequence_length(self) -> int:
        return self.burn_in + self.trace + 1

    limits: ClassVar[dict[str, float]] = {"burn_in": 1000, "trace": 1000}

    def check(self) -> None:
        require(self, ("trace", "period"), 1)
        require(self, ("burn_in",), 0)
        if self.period > self.trace:
            # both flags named: either may be the one given (the other its default)
            raise ValueError(
                f"--period {self.period} / --trace {self.trace}: expected --period <= --trace "
                f"so that every step is learned from (give a --period of {self.trace} or "
                f"less, or a --trace of {self.period} or more)"
            )

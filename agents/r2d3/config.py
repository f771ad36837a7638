"""R2D3's config: R2D2's plus the demo replay, its mixing ratio and the episode memory."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agents.r2d2.config import R2D2Config


@dataclass
class R2D3Config(R2D2Config):
    """R2D3: R2D2 with a prioritized demo replay mixed into every batch."""

    # --- demonstrations --------------------------------------------------------------------
    demos: tuple[Path, ...] = ()
    """Demo episode files or folders (searched recursively for *.h5)."""
    demo_env_override: str | None = None
    """Accept demos recorded on this env id instead of --env (spaces must still match)."""
    demo_ratio: float = 0.25
    """Probability that a batch element comes from the demo replay (initial value)."""
    demo_ratio_final: float | None = None
    """Anneal the demo ratio linearly to this value (none: keep it fixed)."""
    demo_ratio_steps: int = 50_000
    """Env steps over which the demo ratio is annealed."""
    demo_capacity: int = 50_000
    """Demo replay size in sequences."""

    # --- episode memory --------------------------------------------------------------------
    episode_memory_ratio: float = 0.0
    """Probability that a batch element comes from the best agent episodes so far (0: off)."""
    episode_memory_capacity: int = 2_000
    """Episode memory size in sequences."""

    def validate(self) -> None:
        super().validate()
        if not self.demos:
            raise ValueError("--demos: expected at least one demo file or folder, got none")
        for name in ("demo_ratio", "demo_ratio_final", "episode_memory_ratio"):
            v = getattr(self, name)
            if v is not None and not 0.0 <= v <= 1.0:
                raise ValueError(f"--{name.replace('_', '-')}: expected in [0, 1], got {v}")
        top = max(self.demo_ratio, self.demo_ratio_final or 0.0) + self.episode_memory_ratio
        if top > 1.0:
            raise ValueError(
                f"--demo-ratio + --episode-memory-ratio: expected a sum <= 1, got {top}"
            )


__all__ = ["R2D3Config"]

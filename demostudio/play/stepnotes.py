"""What the recorder is told about each step besides its data: the rate the step runs at,
written only when it changed (:class:`~demostudio.play.speed.RateLog`: the file's ``fps`` and
``speed_changes``), and who drives it, told only when that changed (``set_actor``: the person
or the agent of a take-over)."""

from __future__ import annotations

import gymnasium as gym

from demostudio.play.speed import RateLog


class StepNotes:
    """One episode's notes (a new one per episode); ``fps`` is the rate the recorder wrote as
    the file's ``fps``."""

    def __init__(self, fps: float | None):
        self.rates = RateLog(fps)
        self.actor: str | None = None

    def before_step(self, env: gym.Env, step: int, rate: float | None, actor: str | None) -> None:
        """Step ``step`` of ``env`` runs at ``rate`` (None: by hand) driven by ``actor`` (None:
        the controller names none; only controllers that hand over, e.g.
        :class:`~demostudio.play.takeover.TakeoverController`, do)."""
        if step == 0 and rate is not None and rate != self.rates.first_fps:
            self.rates = RateLog(rate)  # the speed changed before the first step
            env.set_attrs(fps=rate)
        elif self.rates.note(step, rate):
            env.set_attrs(speed_changes=[list(c) for c in self.rates.changes])
        if actor is not None and actor != self.actor:
            set_actor = getattr(env, "set_actor", None)
            if callable(set_actor):
                set_actor(actor)
            self.actor = actor


__all__ = ["StepNotes"]

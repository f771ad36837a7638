"""The coach window (``demostudio coach``): the watch window's session and take-over (T), with
a recorder that keeps the episodes a person corrected and tells the trainer each step, and a
training panel over the game.

The trainer itself lives in ``agents.coach`` (imported by the command, never here): this
module sees it only through :class:`StepTap` (where the steps go) and a status callable (the
panel's lines)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import gymnasium as gym
import pygame

from demostudio.episode import RecordEpisodes
from demostudio.episode.actors import is_person
from demostudio.play.hud import HUD_HEIGHT
from demostudio.play.window import PlayWindow
from demostudio.ui import theme


class StepTap(Protocol):
    """Receives every step the window plays (``agents.coach.LiveDemoCutter``)."""

    def begin(self, observation: Any) -> None:
        """A new episode starts at ``observation``."""

    def step(
        self, action: Any, reward: float, terminated: bool, next_obs: Any, person: bool
    ) -> None:
        """One step; ``person``: the person drove it."""

    def flush(self) -> None:
        """The person handed control back to the agent."""

    def end(self, keep: bool) -> None:
        """The episode is over (``keep``: it is saved)."""


class CoachRecorder(RecordEpisodes):
    """:class:`RecordEpisodes` that keeps only the episodes a person drove in (the agent's
    own episodes are not demos) and tells ``tap`` every step, hand-back and episode end."""

    def __init__(self, env: gym.Env, directory, *, tap: StepTap, **kwargs: Any):
        super().__init__(env, directory, **kwargs)
        self.tap = tap
        self.person_steps = 0
        self._stepping = False
        self._end_pending: bool | None = None

    def reset(self, **kwargs: Any):
        obs, info = super().reset(**kwargs)  # ends (and taps the end of) an open episode
        self.person_steps = 0
        self.tap.begin(obs)
        return obs, info

    def step(self, action):
        person = is_person(self.actor)
        self.person_steps += int(person)
        self._stepping = True
        try:
            obs, reward, terminated, truncated, info = super().step(action)
        finally:
            self._stepping = False
        self.tap.step(action, float(reward), bool(terminated), obs, person)
        if self._end_pending is not None:  # the step ended the episode: after its own tap
            keep, self._end_pending = self._end_pending, None
            self.tap.end(keep)
        return obs, reward, terminated, truncated, info

    def set_actor(self, name: str | None) -> None:
        handing_back = is_person(self.actor)
        super().set_actor(name)
        if handing_back and not is_person(self.actor) and self.recording:
            self.tap.flush()

    def end_episode(self, keep: bool = True):
        if self.recording:
            keep = keep and self.person_steps > 0
            if self._stepping:
                self._end_pending = keep
            else:
                self.tap.end(keep)
        return super().end_episode(keep)


PANEL_PAD = 8


class CoachWindow(PlayWindow):
    """The play window with a training panel drawn over the top of the game (the lines of
    ``status()``, read each frame). ``failed()`` True closes the window (the trainer
    stopped with an error)."""

    def __init__(
        self,
        *args: Any,
        status: Callable[[], list[str]],
        failed: Callable[[], bool] = lambda: False,
        **kwargs: Any,
    ):
        super().__init__(*args, **kwargs)
        self.status = status
        self.failed = failed
        self._quit_posted = False

    def draw_panel(self) -> None:
        lines = self.status()
        if not lines:
            return
        images = [theme.font(13).render(t, True, theme.TEXT) for t in lines]
        w = max(i.get_width() for i in images) + 2 * PANEL_PAD
        h = sum(i.get_height() + 2 for i in images) + 2 * PANEL_PAD
        box = pygame.Rect(6, HUD_HEIGHT + 6, min(w, self.surface.get_width() - 12), h)
        shade = pygame.Surface(box.size, pygame.SRCALPHA)
        shade.fill((*theme.PANEL, 215))
        self.surface.blit(shade, box.topleft)
        pygame.draw.rect(self.surface, theme.ACCENT, box, width=1, border_radius=4)
        y = box.top + PANEL_PAD
        for img in images:
            self.surface.blit(img, (box.left + PANEL_PAD, y))
            y += img.get_height() + 2

    def flip(self) -> None:
        self.draw_panel()
        if self.failed() and not self._quit_posted:
            self._quit_posted = True
            pygame.event.post(pygame.event.Event(pygame.QUIT))
        super().flip()


__all__ = ["CoachRecorder", "CoachWindow", "StepTap"]

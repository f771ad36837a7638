"""The episodes of a play session: starting each one (seeded, after its countdown), stepping
it with the controller's action, ending, discarding or keeping it, quitting (asking first
when a person's steps would be lost), and the log of what became of each."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import gymnasium as gym

from demostudio.controllers import Controller
from demostudio.play.options import SessionOptions
from demostudio.play.speed import Speed
from demostudio.play.state import SessionState
from demostudio.play.stepnotes import StepNotes
from demostudio.play.summary import EpisodeLog
from demostudio.play.timing import RateMeter

MESSAGE_SECONDS = 2.5


class EpisodeFlow:
    """The episode side of :class:`~demostudio.play.session.PlaySession`, which extends it
    and makes the state below."""

    env: gym.Env
    controller: Controller
    opts: SessionOptions
    state: SessionState
    speed: Speed
    notes: StepNotes
    meter: RateMeter
    finished: bool
    quitting: bool
    episodes_done: int
    discarded: int
    resets: int
    person_steps: int
    log: list[EpisodeLog]
    obs: Any
    info: dict
    last_reward: float | None
    last_action: Any
    countdown_end: float | None
    message: str
    message_until: float

    @property
    def steps(self) -> int:
        return int(self.env.episode_steps)

    def _say(self, text: str) -> None:
        self.message = text
        self.message_until = time.perf_counter() + MESSAGE_SECONDS

    def new_episode(self) -> None:
        seed = None if self.opts.seed is None else self.opts.seed + self.resets
        self.obs, self.info = self.env.reset(seed=seed)
        self.resets += 1
        self.controller.reset(self.env, self.obs, self.info)
        self.notes = StepNotes(self.opts.fps)  # the recorder wrote this as the file's fps
        self.last_reward = None
        self.last_action = None
        self.state.turns.clear()
        self.person_steps = 0
        now = time.perf_counter()
        wait = self.opts.countdown
        if self.resets == 1:
            wait = max(wait, self.opts.start_countdown)
        self.countdown_end = now + wait if wait > 0 else None
        self.meter.reset()

    def _controller_name(self) -> str:
        return str(getattr(self.controller, "name", "?"))

    def _log(self, steps: int, ret: float, how: str, path: Path | None) -> None:
        number, who = len(self.log) + 1, self._controller_name()
        self.log.append(EpisodeLog(number, steps, ret, how, path, self.person_steps, who))

    def _episode_over(self, path: Path | None, steps: int, ret: float, how: str) -> None:
        self.episodes_done += 1
        self._log(steps, ret, how, path)
        where = f" -> {path.name}" if path is not None else ""
        self._say(f"Episode {self.episodes_done} {how}: {steps} steps, return {ret:.4g}{where}")
        if self.opts.episodes is not None and self.episodes_done >= self.opts.episodes:
            self.finished = True
        else:
            self.new_episode()

    def step(self, by_hand: bool = False) -> None:
        """One env step with the controller's action (``by_hand``: a frame advance)."""
        rate, actor = None if by_hand else self.speed.fps, getattr(self.controller, "actor", None)
        self.notes.before_step(self.env, self.steps, rate, actor)
        action = self.controller.act(self.env, self.obs)
        if self._drives_person():
            self.person_steps += 1
        keys = getattr(self.controller, "last_keys", ())
        self.env.set_keys(keys)
        steps_before, ret_before = self.steps, float(self.env.episode_return)
        n_saved = len(self.env.saved)
        self.obs, reward, terminated, truncated, self.info = self.env.step(action)
        self.last_reward = float(reward)
        self.last_action = action
        self.meter.tick()
        if terminated or truncated:
            path = self.env.saved[-1] if len(self.env.saved) > n_saved else None
            how = "ended" if terminated else "timed out"
            self._episode_over(path, steps_before + 1, ret_before + float(reward), how)

    def end_now(self) -> None:
        """End the episode in progress and save it (marked truncated)."""
        if self.steps == 0:
            self._say("Nothing to save yet: the episode has no steps")
            return
        steps, ret = self.steps, float(self.env.episode_return)
        path = self.env.end_episode(keep=True)
        self._episode_over(path, steps, ret, "ended early")

    def restart(self) -> None:
        """Discard the episode in progress (nothing saved) and start a new one."""
        if self.steps > 0:
            self.discarded += 1
            self._log(self.steps, float(self.env.episode_return), "not saved", None)
        self.env.discard_episode()
        self._say("Episode discarded; restarting")
        self.new_episode()

    def quit(self, keep: bool) -> None:
        if self.steps > 0 and keep:
            steps, ret = self.steps, float(self.env.episode_return)
            path = self.env.end_episode(keep=True)
            self.episodes_done += 1
            self._log(steps, ret, "saved at quit", path)
            self._say(f"Saved the episode in progress: {steps} steps, return {ret:.4g}")
        else:
            if self.steps > 0:
                self.discarded += 1
                how = "not saved" if getattr(self.env, "recording", False) else "stopped"
                self._log(self.steps, float(self.env.episode_return), how, None)
            self.env.discard_episode()
        self.finished = True
        self.quitting = True

    def _drives_person(self) -> bool:
        """The step being played is a person's: keyboard play, or a take-over."""
        actor = getattr(self.controller, "actor", None)
        if actor is not None:
            return str(actor).startswith("person:")
        return self._controller_name() == "keyboard"

    def worth_asking(self) -> bool:
        """Quitting now would lose a person's steps: an episode in progress is being recorded
        and a person drove some of it (keyboard play: any step; watching an agent: a
        take-over). Then Esc and closing the window ask first."""
        recording = bool(getattr(self.env, "recording", False))
        return recording and self.steps > 0 and self.person_steps > 0

    def ask_to_quit(self) -> None:
        """Esc or the window closed: ask when a person's steps would be lost, else quit (an
        agent's unfinished episode is not saved)."""
        if self.opts.keep_on_quit:
            self.quit(True)
        elif self.worth_asking():
            self.state.confirm_quit = True
            self.state.help = False  # the question shows above everything else
        else:
            self.quit(False)

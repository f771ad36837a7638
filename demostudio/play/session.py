"""The game loop: one :class:`PlaySession` runs episodes of a (recording) env in a
:class:`PlayWindow` with any controller, the keyboard or an agent.

Each tick handles the window's events (:func:`process_event`), carries out the requests
(restart, end now, quit, screenshot, zoom, one frame step, speed), steps the env once when the
game is running (every tick at the fixed rate; turn-based, once per key press), draws the
frame, HUD and overlays and waits for the next tick. An episode is saved the moment it ends
(by ``RecordEpisodes``); the next one starts with a fresh seed after the countdown.

The rate can change during play (``[`` / ``]``) and paused play can be stepped by hand
(``.``); every step's rate is kept in the file (:mod:`demostudio.play.speed`). With a
:class:`~demostudio.play.takeover.TakeoverController` (watching an agent) T hands control to
the person and back, and each step is attributed to whoever drove it (``set_actor``).

Around the loop: its options are in :mod:`~demostudio.play.options`, what it played in
:mod:`~demostudio.play.summary`, the words it draws in :mod:`~demostudio.play.hudtext` and
:mod:`~demostudio.play.overlays`, the hold after the last episode in
:mod:`~demostudio.play.hold`, what each step's rate and driver are noted as in
:mod:`~demostudio.play.stepnotes`. Its episode side (start, step, end, discard, quit) is
:class:`~demostudio.play.episode_flow.EpisodeFlow` and its drawing
:class:`~demostudio.play.session_draw.SessionDrawing`, both of which it extends."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path
from typing import Any

import gymnasium as gym
import pygame

from demostudio.controllers import Controller
from demostudio.episode import env_folder_name
from demostudio.play.envclose import close_env
from demostudio.play.episode_flow import MESSAGE_SECONDS as MESSAGE_SECONDS
from demostudio.play.episode_flow import EpisodeFlow
from demostudio.play.hold import hold_until_key
from demostudio.play.keymap import KeyMap
from demostudio.play.options import SessionOptions
from demostudio.play.session_draw import SessionDrawing
from demostudio.play.speed import Speed
from demostudio.play.state import Request, SessionState, process_event
from demostudio.play.stepnotes import StepNotes
from demostudio.play.summary import EpisodeLog, PlayResult
from demostudio.play.timing import RateClock, RateMeter
from demostudio.play.window import PlayWindow

TURN_BASED_REDRAW_FPS = 30.0
# Turn-based keyboard play: holding a key repeats it (pygame key repeat), delay and interval.
KEY_REPEAT_MS = (350, 120)


class PlaySession(EpisodeFlow, SessionDrawing):
    """Runs ``controller`` on ``env`` in ``window``.

    ``env`` is a :class:`~demostudio.episode.RecordEpisodes` (recording) or a
    :class:`~demostudio.play.tracking.TrackEpisodes` (watching only); both render into
    ``last_frame``. ``keymap`` is shown by the help overlay and gives the game keys."""

    def __init__(
        self,
        env: gym.Env,
        controller: Controller,
        window: PlayWindow,
        options: SessionOptions,
        *,
        keymap: KeyMap | None = None,
        state: SessionState | None = None,
    ):
        self.env = env
        self.controller = controller
        self.window = window
        self.opts = options
        self.keymap = keymap
        self.state = state if state is not None else SessionState()
        self.game_keys = keymap.keys if keymap is not None else frozenset()
        self.speed = Speed(None if options.turn_based else options.fps)
        rate = TURN_BASED_REDRAW_FPS if options.turn_based else options.fps
        self.clock = RateClock(rate)
        self.notes = StepNotes(self.speed.fps)
        self._person = self.state.person
        self.meter = RateMeter()
        self.finished = False
        self.quitting = False
        """The person quit (Esc, the window closed) rather than the episodes running out."""
        self.episodes_done = 0
        self.discarded = 0
        self.resets = 0
        self.person_steps = 0
        """Steps of the episode in progress that a person drove."""
        self.log: list[EpisodeLog] = []
        self.holding = False
        """The session's episodes are done and the window holds (``hold_at_end``)."""
        self.obs: Any = None
        self.info: dict = {}
        self.last_reward: float | None = None
        self.last_action: Any = None
        self.countdown_end: float | None = None
        self.message = ""
        self.message_until = 0.0
        self._last_tick = time.perf_counter()

    def step_once(self) -> None:
        """Frame advance (paused): one step with the keys held now, recorded like any step."""
        if self.opts.turn_based:
            self._say("Turn-based: every game key press is one step")
            return
        self.countdown_end = None
        self.step(by_hand=True)

    def change_speed(self, steps: int) -> None:
        """``steps`` along the speed ladder; the HUD shows the rate, the file keeps it."""
        if self.speed.base_fps is None:
            self._say(
                "Turn-based: the game steps on key presses"
                if self.opts.turn_based
                else "The game runs as fast as it can; the speed is fixed"
            )
            return
        if not self.speed.change(steps):
            self._say(f"Speed stays x{self.speed.factor:g} ({self.speed.fps:g} steps/s)")
            return
        self.clock.set_fps(self.speed.fps)
        self.meter.reset()
        self._say(f"Speed x{self.speed.factor:g}: {self.speed.fps:g} steps/s")

    def screenshot(self) -> Path:
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S-%f")[:-3]
        name = f"{env_folder_name(self.opts.env_id)}-{stamp}.png"
        path = self.window.screenshot(self.opts.screenshots / name)
        self._say(f"Screenshot saved to {path}")
        return path

    def _handle(self, request: Request) -> None:
        if request is Request.RESTART:
            self.restart()
        elif request is Request.END_EPISODE:
            self.end_now()
        elif request is Request.QUIT:
            self.ask_to_quit()
        elif request is Request.QUIT_KEEP:
            self.quit(True)
        elif request is Request.QUIT_DISCARD:
            self.quit(False)
        elif request is Request.SCREENSHOT:
            self.screenshot()
        elif request is Request.ZOOM_IN:
            if not self.window.zoom_in():
                self._say("The window is as large as the screen allows")
        elif request is Request.ZOOM_OUT:
            self.window.zoom_out()
        elif request is Request.STEP_ONCE:
            self.step_once()
        elif request is Request.SLOWER:
            self.change_speed(-1)
        elif request is Request.FASTER:
            self.change_speed(+1)

    # ---- the loop ------------------------------------------------------------------------------

    @property
    def person_drives(self) -> bool:
        """The keyboard drives: keyboard play, or a person who took over from the agent."""
        if self.keymap is None:
            return False
        return getattr(self.controller, "name", "") == "keyboard" or self.state.person

    def handle_events(self, events: list[pygame.event.Event]) -> None:
        for event in events:  # each event's requests before the next event (X, then D)
            process_event(
                self.state, event, self.game_keys, self.opts.turn_based, self.person_drives
            )
            self._carry_out()
        if self.state.person != self._person:
            self._person = self.state.person
            self._say(
                "You drive: the game's keys apply (T hands back to the agent)"
                if self.state.person
                else "The agent drives again (T to take over)"
            )
        if self.state.resize is not None:
            self.window.resize(*self.state.resize)
            self.state.resize = None

    def _carry_out(self) -> None:
        for request in self.state.take_requests():
            if self.finished:
                break
            self._handle(request)
        if self.state.confirm_quit and not self.finished and not self.worth_asking():
            # Esc, and nothing of a person's would be lost: quit without asking.
            self.state.confirm_quit = False
            self.ask_to_quit()

    def tick(self) -> bool:
        """One iteration of the loop; False once the session is over."""
        now = time.perf_counter()
        dt, self._last_tick = now - self._last_tick, now
        self.handle_events(pygame.event.get())
        if self.finished:
            return False
        if self.countdown_end is not None:
            if self.state.frozen:
                self.countdown_end += dt
            elif now >= self.countdown_end:
                self.countdown_end = None
        elif not self.state.frozen:
            ready = getattr(self.controller, "ready", None)
            if ready is None or ready():
                self.step()
        if self.finished:
            return False
        self.draw()
        self.wait_for_next_tick()
        return True

    def wait_for_next_tick(self) -> None:
        """Sleep until the next tick; the recorder does its heavy work (compressing the
        frame) during this wait rather than competing with the tick for the CPU."""
        self.env.caller_idle()
        self.clock.wait()
        self.env.caller_busy()

    def run(self) -> PlayResult:
        """Play until the player quits or ``options.episodes`` episodes are finished."""
        repeat = self.opts.turn_based and self.keymap is not None
        if repeat:
            pygame.key.set_repeat(*KEY_REPEAT_MS)
        try:
            self.new_episode()
            while self.tick():
                pass
            if self.opts.hold_at_end and self.episodes_done and not self.quitting:
                self.hold()
        finally:
            if repeat and pygame.display.get_init():
                pygame.key.set_repeat()
            self.close()
        return self.result()

    def hold(self) -> None:
        """Keep the window on the last frame with the session's summary until one of
        :data:`~demostudio.play.hold.HOLD_KEYS` is pressed or the window is closed."""
        self.holding = True
        self.state.paused = self.state.help = self.state.confirm_quit = False
        self.clock.set_fps(TURN_BASED_REDRAW_FPS)
        hold_until_key(self.window, self.clock, self.draw)

    def close(self) -> None:
        """Leave nothing half-done: an episode still open (an interrupted session, e.g.
        Ctrl-C) is kept when ``keep_on_quit`` or when a person drove in it (it cannot be
        asked about), else discarded; then the env is closed."""
        if not self.finished and getattr(self.env, "recording", False):
            keep = self.steps > 0 and (self.opts.keep_on_quit or self.worth_asking())
            steps, ret = self.steps, float(self.env.episode_return)
            path = self.env.end_episode(keep=keep)
            if steps > 0:
                self._log(steps, ret, "saved at quit" if keep else "not saved", path)
        self.finished = True
        close_env(self.env)

    def result(self) -> PlayResult:
        return PlayResult(list(self.env.saved), self.episodes_done, self.discarded, tuple(self.log))


__all__ = ["EpisodeLog", "PlayResult", "PlaySession", "SessionOptions"]

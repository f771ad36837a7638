"""Drawing a play session: the game frame, the HUD's line (who drives, what they press), and
the overlays (countdown, paused, the quit question, the hold screen, the keys help,
messages)."""

from __future__ import annotations

import time
from typing import Any

import gymnasium as gym

from demostudio.controllers import Controller
from demostudio.play import hud, overlays
from demostudio.play.hudtext import action_text, control_text, lives
from demostudio.play.keymap import KeyMap, describe_keys
from demostudio.play.options import SessionOptions
from demostudio.play.speed import Speed
from demostudio.play.state import SessionState
from demostudio.play.summary import EpisodeLog, summary_lines
from demostudio.play.timing import RateMeter
from demostudio.play.window import PlayWindow


class SessionDrawing:
    """The drawing side of :class:`~demostudio.play.session.PlaySession`, which extends it
    and makes the state below; ``person_drives``, ``steps`` and ``_controller_name`` are the
    session's too."""

    env: gym.Env
    controller: Controller
    window: PlayWindow
    opts: SessionOptions
    keymap: KeyMap | None
    state: SessionState
    speed: Speed
    meter: RateMeter
    holding: bool
    episodes_done: int
    log: list[EpisodeLog]
    info: dict
    last_reward: float | None
    last_action: Any
    countdown_end: float | None
    message: str
    message_until: float

    def _input_text(self) -> str:
        if self.person_drives:
            keys = f"keys {describe_keys(self.state.held)}"
            if not self.state.can_take_over:
                return keys
            agent = getattr(self.controller, "agent_action", None)
            return f"{keys}  (agent: {action_text(agent, self.env)})"
        return f"action {action_text(self.last_action, self.env)}"

    def hud_info(self) -> hud.HudInfo:
        now = time.perf_counter()
        return hud.HudInfo(
            env_id=self.opts.env_id,
            controller=getattr(self.controller, "name", "?"),
            recording=bool(getattr(self.env, "recording", False)),
            paused=self.state.paused,
            turn_based=self.opts.turn_based,
            episode=self.episodes_done + (0 if self.holding else 1),
            saved=len(self.env.saved),
            step=self.steps,
            episode_return=float(self.env.episode_return),
            last_reward=self.last_reward,
            fps=self.meter.rate,
            target_fps=self.speed.fps,
            speed=self.speed.factor,
            lives=lives(self.info),
            input=self._input_text(),
            blink=int(now * 2) % 2 == 0,
            control="" if self.holding else self._control_text(),
            person=self.state.person,
        )

    def _control_text(self) -> str:
        """Who is in control, for the HUD ("" when only ever the keyboard or the agent)."""
        return control_text(self.state.can_take_over, self.state.person, self._controller_name())

    def _summary_lines(self, most: int = 6) -> list[str]:
        """The hold screen's lines: the last ``most`` episodes, then how to leave."""
        in_folder = getattr(self.env, "directory", None) is not None
        return summary_lines(self.log, len(self.env.saved), in_folder, most)

    def draw(self) -> None:
        w, state = self.window, self.state
        w.draw_frame(self.env.last_frame)
        surface, rect = w.surface, w.frame_rect
        hud.draw_hud(surface, w.hud_rect, self.hud_info())
        now = time.perf_counter()
        if self.countdown_end is not None and not state.help and not self.holding:
            left, episode = self.countdown_end - now, self.episodes_done + 1
            overlays.draw_countdown(surface, rect, left, episode, state.can_take_over)
        if state.paused and not state.help:
            overlays.draw_paused(surface, rect)
        if state.confirm_quit:
            overlays.draw_quit_question(surface, w.game_rect, self.steps, self.person_steps)
        if self.holding:
            overlays.draw_done(surface, w.game_rect, self._summary_lines())
        if state.help:
            overlays.draw_keys_help(
                surface,
                w.game_rect,
                self.keymap,
                self.opts.env_id,
                self._controller_name(),
                can_take_over=state.can_take_over,
                turn_based=self.opts.turn_based,
            )
        if self.message and now < self.message_until:
            hud.draw_message(surface, w.game_rect, self.message)
        w.flip()

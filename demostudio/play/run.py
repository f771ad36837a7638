"""Entry points: :func:`run_play` (the keyboard, ``demostudio play``) and
:func:`run_controller_window` (any controller, e.g. a trained agent for ``demostudio watch``)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym

from demostudio.controllers import Controller
from demostudio.episode import RecordEpisodes, env_folder_name, make_env_with_kwargs
from demostudio.play.config import PlayConfig, default_player
from demostudio.play.envclose import close_env
from demostudio.play.keyboard import KeyboardController
from demostudio.play.keymap import KeyMap, KeyMapError, resolve_keymap
from demostudio.play.options import SessionOptions
from demostudio.play.session import PlaySession
from demostudio.play.state import SessionState
from demostudio.play.summary import PlayResult
from demostudio.play.takeover import TakeoverController
from demostudio.play.timing import realtime_fps, turn_based_default
from demostudio.play.tracking import TrackEpisodes
from demostudio.play.window import PlayWindow


def _first_frame_size(env: gym.Env) -> tuple[int, int]:
    """(width, height) of the env's frames, from one throwaway reset."""
    env.reset()
    frame = env.render()
    if frame is None or getattr(frame, "ndim", 0) != 3:
        raise ValueError(
            f"expected {env.spec.id if env.spec else env} to render (H, W, 3) RGB frames, "
            f"got {type(frame).__name__}"
        )
    return int(frame.shape[1]), int(frame.shape[0])


def build_session(cfg: PlayConfig, window: PlayWindow | None = None) -> PlaySession:
    """The env, key map, keyboard controller, window and session for ``cfg`` (not started)."""
    extra: dict[str, Any] = {"render_mode": "rgb_array"}
    if cfg.max_episode_steps is not None:
        extra["max_episode_steps"] = cfg.max_episode_steps
    env = make_env_with_kwargs(cfg.env, cfg.make_kwargs(), **extra)
    try:
        keymap = resolve_keymap(env, cfg.env, cfg.keymap)
        turn_based = turn_based_default(cfg.env) if cfg.turn_based is None else cfg.turn_based
        for flag, value in (("fps", cfg.fps), ("episodes", cfg.episodes), ("zoom", cfg.zoom)):
            if value is not None and value <= 0:
                raise ValueError(f"--{flag}: expected a positive number, got {value}")
        fps = cfg.fps if cfg.fps is not None else realtime_fps(env)
        size = _first_frame_size(env)
    except BaseException:
        close_env(env)
        raise
    if cfg.record:
        wrapped: gym.Env = RecordEpisodes(
            env,
            cfg.out / env_folder_name(cfg.env),
            controller="keyboard",
            player=cfg.player_name(),
            key_map=keymap.to_json(),
            fps=None if turn_based else fps,
            attrs={"turn_based": turn_based, "key_map_source": keymap.source},
            background_close=True,
        )
    else:
        wrapped = TrackEpisodes(env)
    state = SessionState()
    controller = KeyboardController(keymap, state, turn_based)
    if window is None:
        window = PlayWindow(*size, caption=f"DemoStudio - {cfg.env}", zoom=cfg.zoom)
    opts = SessionOptions(
        env_id=cfg.env,
        fps=None if turn_based else fps,
        turn_based=turn_based,
        countdown=cfg.countdown,
        episodes=cfg.episodes,
        keep_on_quit=cfg.keep_on_quit,
        screenshots=cfg.screenshots,
        seed=cfg.seed,
    )
    return PlaySession(wrapped, controller, window, opts, keymap=keymap, state=state)


def run_play(cfg: PlayConfig) -> PlayResult:
    """Play ``cfg.env`` with the keyboard in a window until the player quits."""
    return build_session(cfg).run()


def run_controller_window(env_id: str, controller: Controller, **kwargs: Any) -> list[Path]:
    """Show ``controller`` (e.g. a trained agent) playing ``env_id`` in the play window until
    the episodes are done or the person quits; the saved episode files (empty when nothing
    is recorded). Arguments: see :func:`build_controller_session`."""
    return build_controller_session(env_id, controller, **kwargs).run().saved


def build_controller_session(
    env_id: str,
    controller: Controller,
    *,
    out_dir: str | os.PathLike | None = None,
    episodes: int | None = 1,
    fps: float | None = None,
    env_kwargs: dict[str, Any] | None = None,
    player: str = "",
    countdown: float = 0.0,
    zoom: float | None = None,
    takeover: bool = False,
    keymap: str | os.PathLike | None = None,
    recorder: Callable[..., RecordEpisodes] = RecordEpisodes,
    window: Callable[..., PlayWindow] = PlayWindow,
    make: Callable[..., gym.Env] | None = None,
) -> PlaySession:
    """The session that shows ``controller`` (e.g. a trained agent) playing ``env_id`` in the
    play window (not started: :meth:`PlaySession.run` plays it).

    Args:
        env_id: Gymnasium id (ALE/MiniGrid ids are registered as needed).
        controller: follows :class:`demostudio.controllers.Controller` (``name``,
            ``reset(env, obs, info)``, ``act(env, obs)``); its ``name`` is recorded.
        out_dir: when given, every episode is recorded through ``RecordEpisodes`` into this
            folder (the files go directly in it); None only shows the game.
        episodes: close the window after this many finished episodes (None: until Esc).
        fps: steps per second; None plays at the env's real-time rate (Atari v5: 15).
        env_kwargs: extra ``gymnasium.make`` keyword arguments.
        player: stored as the episodes' player; with ``takeover``, the person who takes
            over (default: the login name), whose steps are ``person:<player>``.
        countdown: seconds of 3-2-1 before each episode.
        zoom: window zoom (None: fit about 1000x720).
        takeover: T hands control to the person (the game's key map, ``keymap`` or the
            env's own) and back, as often as wanted; the agent keeps observing and each
            step is recorded as the agent's or the person's (``set_actor``). Without a key
            map for the game (and no ``keymap`` file) the agent simply plays.
        keymap: a key map JSON file for the person's take-overs.
        recorder: the recording wrapper's class (or a factory taking its arguments), e.g.
            the coach's recorder that keeps only the person's corrections.
        window: the window's class (or factory), e.g. the coach's with a training panel.
        make: builds the env (called with ``render_mode="rgb_array"``) instead of
            ``gymnasium.make(env_id, **env_kwargs)``, e.g. a trained agent's own builder
            (Atari frame stacks) so the policy sees what it was trained on.

    The window's controls
    work as in ``demostudio play`` (P pause, ``.`` frame step, ``[``/``]`` speed, Backspace
    restart, End end-and-save, Esc quit, F12 screenshot, +/- zoom); the HUD shows the
    agent's action, or the keys and who drives during a take-over."""
    if make is not None:
        env = make(render_mode="rgb_array")
    else:
        env = make_env_with_kwargs(env_id, env_kwargs or {}, render_mode="rgb_array")
    try:
        rate = realtime_fps(env) if fps is None else float(fps)
        if rate <= 0:
            raise ValueError(f"fps: expected a positive number or None, got {fps}")
        size = _first_frame_size(env)
        keys = _takeover_keymap(env, env_id, keymap) if takeover else None
    except BaseException:
        close_env(env)
        raise
    state = SessionState()
    if keys is not None:
        player = player or default_player()
        keyboard = KeyboardController(keys, state)
        controller = TakeoverController(controller, keyboard, state, player)
    if out_dir is not None:
        wrapped: gym.Env = recorder(
            env,
            Path(out_dir),
            controller=controller.name,
            player=player,
            key_map=None if keys is None else keys.to_json(),
            fps=rate,
            attrs={} if keys is None else {"key_map_source": keys.source},
            background_close=True,
        )
    else:
        wrapped = TrackEpisodes(env)
    shown = window(*size, caption=f"DemoStudio - {env_id} - {controller.name}", zoom=zoom)
    opts = SessionOptions(env_id=env_id, fps=rate, countdown=countdown, episodes=episodes)
    return PlaySession(wrapped, controller, shown, opts, keymap=keys, state=state)


def _takeover_keymap(
    env: gym.Env, env_id: str, user_file: str | os.PathLike | None
) -> KeyMap | None:
    """The key map a person takes over with; None when the game has none (and no file is
    given): then the agent plays without take-over."""
    try:
        return resolve_keymap(env, env_id, user_file)
    except KeyMapError:
        if user_file is not None:
            raise
        return None

"""The game loop driven by real pygame events: what is saved, when, and with which actions."""

from __future__ import annotations

import time

import numpy as np
import pygame
import pytest

from demostudio.controllers import scripted_controller
from demostudio.episode import (
    RecordEpisodes,
    find_episodes,
    load_episode,
    make_env,
    read_summary,
)
from demostudio.play import PlayConfig, build_session, run_controller_window, run_play

from .helpers import FAST, post_key, tap, ticks
from .helpers import play_session as session


def folder_files(s):
    return sorted(p.name for p in s.env.directory.iterdir())


def test_keys_played_are_the_actions_saved(tmp_path):
    s = session(tmp_path)
    post_key(pygame.K_RIGHT)
    ticks(s, 5)
    post_key(pygame.K_RIGHT, down=False)
    ticks(s, 3)
    post_key(pygame.K_LEFT)
    ticks(s, 4)
    post_key(pygame.K_LEFT, down=False)
    tap(pygame.K_END)  # end now: saved, marked truncated
    s.tick()
    assert len(s.env.saved) == 1
    data = load_episode(s.env.wait_saved()[0])
    assert data.actions.tolist() == [2] * 5 + [1] * 3 + [0] * 4
    assert data.keys == [["right"]] * 5 + [[]] * 3 + [["left"]] * 4
    assert np.all(np.diff(data.timestamps) >= 0) and len(data.timestamps) == 13
    summary = data.summary
    assert summary.truncated and not summary.terminated and summary.length == 12
    assert summary.controller == "keyboard" and summary.player == "tester"
    assert summary.fps == FAST
    key_map = summary.attrs["key_map"]
    assert key_map["left"] == 0 and key_map["right"] == 2 and key_map[""] == 1
    s.quit(False)
    s.close()


def test_pause_records_nothing(tmp_path):
    s = session(tmp_path)
    ticks(s, 3)
    tap(pygame.K_p)
    ticks(s, 10)
    assert s.steps == 3
    tap(pygame.K_p)
    ticks(s, 2)
    assert s.steps == 5
    tap(pygame.K_END)
    s.tick()
    assert read_summary(s.env.wait_saved()[0]).length == 5
    s.quit(False)
    s.close()


def test_discard_leaves_no_file(tmp_path):
    s = session(tmp_path)
    ticks(s, 6)
    tap(pygame.K_BACKSPACE)
    s.tick()
    assert s.env.saved == [] and s.discarded == 1
    assert s.steps == 1  # a fresh episode is under way
    assert not [n for n in folder_files(s) if n.endswith(".h5")]
    tap(pygame.K_ESCAPE)
    tap(pygame.K_d)  # quit prompt: D discards
    assert not s.tick()
    s.close()
    assert folder_files(s) == []


def test_quit_keeps_finished_episodes_and_discards_the_one_in_progress(tmp_path):
    s = session(tmp_path, max_episode_steps=5)
    ticks(s, 12)  # two finished episodes of 5 steps, 2 steps into the third
    assert s.episodes_done == 2 and s.steps == 2
    tap(pygame.K_ESCAPE)
    s.tick()
    assert s.state.confirm_quit and s.steps == 2  # nothing stepped while asking
    tap(pygame.K_d)
    assert not s.tick()
    s.close()
    files = find_episodes(s.env.directory)
    assert [read_summary(p).length for p in files] == [5, 5]
    assert all(read_summary(p).truncated for p in files)
    assert folder_files(s) == sorted(p.name for p in files)  # no .partial left


def test_quit_can_keep_the_episode_in_progress(tmp_path):
    s = session(tmp_path, max_episode_steps=5)
    ticks(s, 7)
    tap(pygame.K_ESCAPE)
    post_key(pygame.K_RETURN)  # Enter: save this episode and quit
    assert not s.tick()
    s.close()
    assert [read_summary(p).length for p in find_episodes(s.env.directory)] == [5, 2]


def close_window() -> None:
    pygame.event.post(pygame.event.Event(pygame.QUIT))


def test_closing_the_window_asks_like_escape_and_escape_goes_back(tmp_path):
    s = session(tmp_path)
    ticks(s, 4)
    close_window()
    assert s.tick()  # not gone: it asks
    assert s.state.confirm_quit and s.steps == 4
    tap(pygame.K_ESCAPE)  # Esc in the prompt: back to the game
    ticks(s, 3)
    assert not s.state.confirm_quit and s.steps == 7
    close_window()
    s.tick()
    tap(pygame.K_RETURN)  # Enter: save and quit
    assert not s.tick()
    s.close()
    assert [read_summary(p).length for p in s.env.saved] == [7]
    assert s.result().log[-1].how == "saved at quit"


def test_closing_the_window_twice_keeps_the_episode(tmp_path):
    s = session(tmp_path)
    ticks(s, 5)
    close_window()
    s.tick()
    assert s.state.confirm_quit
    close_window()  # closed again while asking: keep it and quit, never lose it
    assert not s.tick()
    s.close()
    assert [read_summary(p).length for p in s.env.saved] == [5] and s.discarded == 0


def test_closing_the_window_then_d_discards(tmp_path):
    s = session(tmp_path)
    ticks(s, 5)
    close_window()
    tap(pygame.K_d)  # the same batch of events: the prompt opens, then D answers it
    assert not s.tick()
    s.close()
    assert s.env.saved == [] and s.discarded == 1
    assert not [n for n in folder_files(s) if n.endswith((".h5", ".partial"))]


def test_closing_the_window_with_nothing_recorded_quits_at_once(tmp_path):
    s = session(tmp_path, record=False)
    ticks(s, 5)
    close_window()
    assert not s.tick()
    s.close()


def test_an_interrupted_session_keeps_the_persons_episode(tmp_path):
    s = session(tmp_path)
    ticks(s, 6)
    s.close()  # e.g. Ctrl-C in the terminal: nobody can be asked
    assert [read_summary(p).length for p in s.env.wait_saved()] == [6]


def test_window_close_follows_keep_on_quit(tmp_path):
    s = session(tmp_path, keep_on_quit=True)
    ticks(s, 4)
    pygame.event.post(pygame.event.Event(pygame.QUIT))
    assert not s.tick()
    s.close()
    assert read_summary(s.env.saved[0]).length == 4


def test_escape_before_any_step_quits_at_once(tmp_path):
    cfg = PlayConfig(env="MountainCar-v0", out=tmp_path, countdown=5, fps=FAST)
    s = build_session(cfg)
    s.new_episode()
    s.tick()
    assert s.steps == 0 and s.countdown_end is not None  # counting down
    tap(pygame.K_ESCAPE)
    assert not s.tick()
    s.close()
    assert find_episodes(tmp_path) == []


def test_turn_based_steps_only_on_key_presses(tmp_path):
    s = session(tmp_path, env="MiniGrid-DoorKey-5x5-v0", fps=None)
    assert s.opts.turn_based and s.opts.fps is None
    s.clock.set_fps(None)  # redraw without waiting
    ticks(s, 10)
    assert s.steps == 0
    tap(pygame.K_UP)
    ticks(s, 3)
    assert s.steps == 1
    tap(pygame.K_LEFT)
    tap(pygame.K_RIGHT)
    tap(pygame.K_SPACE)
    ticks(s, 5)
    assert s.steps == 4
    tap(pygame.K_END)
    s.tick()
    data = load_episode(s.env.wait_saved()[0])
    actions = s.env.unwrapped.actions
    assert data.actions.tolist() == [actions.forward, actions.left, actions.right, actions.toggle]
    assert data.keys == [["up"], ["left"], ["right"], ["space"]]
    assert data.summary.attrs["turn_based"] is True and data.summary.fps is None
    s.quit(False)
    s.close()


def test_fixed_rate_and_fps_stored(tmp_path):
    s = session(tmp_path, fps=40.0)
    s.tick()  # first tick starts the schedule
    start = time.perf_counter()
    ticks(s, 8)
    elapsed = time.perf_counter() - start
    assert elapsed >= 7 / 40  # ~25 ms a step
    tap(pygame.K_END)
    s.tick()
    assert read_summary(s.env.wait_saved()[0]).fps == 40.0  # saved in the background
    s.quit(False)
    s.close()


def test_screenshot_zoom_and_resize_keep_aspect(tmp_path):
    s = session(tmp_path, screenshots=tmp_path / "shots")
    ticks(s, 2)
    tap(pygame.K_F12)
    s.tick()
    shots = list((tmp_path / "shots").glob("MountainCar-v0-*.png"))
    assert len(shots) == 1
    w0, h0 = s.window.surface.get_size()
    tap(pygame.K_EQUALS)
    s.tick()
    w1, h1 = s.window.surface.get_size()
    assert w1 > w0 and h1 > h0
    pygame.event.post(pygame.event.Event(pygame.VIDEORESIZE, w=900, h=400, size=(900, 400)))
    s.tick()
    rect = s.window.frame_rect
    assert rect.w / rect.h == pytest.approx(600 / 400, rel=0.02)
    assert rect.h <= 400 and s.window.surface.get_size() == (900, 400)
    s.quit(False)
    s.close()


def test_run_stops_after_the_episodes_asked_for(tmp_path):
    cfg = PlayConfig(
        env="CartPole-v1",
        out=tmp_path,
        countdown=0,
        fps=FAST,
        episodes=2,
        max_episode_steps=4,
        seed=7,
    )
    result = run_play(cfg)
    assert result.episodes == 2 and len(result.saved) == 2
    summaries = [read_summary(p) for p in result.saved]
    assert [x.seed for x in summaries] == [7, 8]
    assert all(x.length == 4 for x in summaries)
    # CartPole has no key map of its own: the bundled one is recorded.
    assert summaries[0].attrs["key_map_source"] == "bundled:cartpole.json"


def test_every_episode_gets_a_fresh_seed(tmp_path):
    result = run_play(
        PlayConfig(
            env="MountainCar-v0",
            out=tmp_path,
            countdown=0,
            fps=FAST,
            episodes=3,
            max_episode_steps=2,
        )
    )
    seeds = {read_summary(p).seed for p in result.saved}
    assert len(seeds) == 3
    assert all(0 <= s < 2**63 for s in seeds)  # each one a --seed flag takes, to play it again


@pytest.mark.parametrize("seed", [-1, 2**64])
def test_a_seed_no_episode_file_can_hold_is_refused_before_the_env_resets(tmp_path, seed):
    env = RecordEpisodes(make_env("MountainCar-v0", render_mode="rgb_array"), tmp_path)
    with pytest.raises(ValueError, match=r"seed: expected an integer from 0 to 2\*\*64-1"):
        env.reset(seed=seed)
    env.close()
    assert list(tmp_path.iterdir()) == []


def test_controller_window_records_an_agent(tmp_path):
    controller = scripted_controller("MountainCar-v0")
    saved = run_controller_window(
        "MountainCar-v0",
        controller,
        out_dir=tmp_path / "agent",
        episodes=2,
        fps=FAST,
        env_kwargs={"max_episode_steps": 6},
    )
    assert len(saved) == 2
    summary = read_summary(saved[0])
    assert summary.controller == controller.name and summary.length == 6
    assert summary.fps == FAST
    assert (
        run_controller_window(
            "MountainCar-v0", controller, fps=FAST, episodes=1, env_kwargs={"max_episode_steps": 3}
        )
        == []
    )


def test_screens_of_the_play_window(tmp_path):
    """Screenshots with HUD, help, pause and countdown overlays (look at them: /tmp/play_*)."""
    for env_id in ("MountainCar-v0", "ALE/Breakout-v5"):
        s = session(tmp_path, env=env_id)
        post_key(pygame.K_SPACE if env_id.startswith("ALE") else pygame.K_RIGHT)
        ticks(s, 20)
        for overlay in ("", "help", "paused", "confirm_quit"):
            if overlay:
                setattr(s.state, overlay, True)
            s.draw()
            if overlay:
                setattr(s.state, overlay, False)
            path = s.window.screenshot(tmp_path / f"{overlay or 'hud'}.png")
            pixels = pygame.surfarray.array3d(pygame.image.load(str(path)))
            assert pixels.reshape(-1, 3).std(axis=0).sum() > 10  # not a blank image
        assert s.hud_info().step == 20
        if env_id.startswith("ALE"):
            assert s.hud_info().lives == 5
        s.quit(False)
        s.close()


def test_focus_loss_pauses_keyboard_play(tmp_path):
    s = session(tmp_path)
    post_key(pygame.K_RIGHT)
    pygame.event.post(pygame.event.Event(pygame.WINDOWFOCUSGAINED))
    ticks(s, 2)
    pygame.event.post(pygame.event.Event(pygame.WINDOWFOCUSLOST))
    ticks(s, 3)
    assert s.steps == 2 and s.state.paused and s.state.held == []
    s.quit(False)
    s.close()


def test_the_window_and_its_zoom_fit_the_desktop(tmp_path, monkeypatch):
    monkeypatch.setattr(pygame.display, "get_desktop_sizes", lambda: [(1280, 800)])
    s = session(tmp_path, record=False)  # MountainCar: 600x400 frames, zoom 1
    for _ in range(12):  # + well past the screen
        tap(pygame.K_EQUALS)
        s.tick()
    w, h = s.window.surface.get_size()
    assert w <= 1280 and h <= 0.9 * 800 and s.window.zoom > 1
    assert s.message == "The window is as large as the screen allows"
    assert s.window.frame_rect.bottom <= h and s.window.frame_rect.right <= w
    s.quit(False)
    s.close()
    # an explicit zoom too large for the screen opens fitted
    monkeypatch.setattr(pygame.display, "get_desktop_sizes", lambda: [(1024, 600)])
    big = session(tmp_path, record=False, zoom=4.0)
    assert big.window.surface.get_size()[1] <= 0.9 * 600
    big.quit(False)
    big.close()


def test_a_long_message_wraps_in_a_narrow_window_and_keeps_the_file_names_ends():
    from demostudio.play import hud
    from demostudio.ui import theme

    font = theme.font(14)
    text = "Episode 1 ended early: 107 steps, return 0 -> 20261126-232858-280-00ae.h5"
    for width in (520, 300, 150):
        lines = hud.wrap_lines(text, font, width)
        assert all(font.size(line)[0] <= width for line in lines)
        assert lines[0].startswith("Episode 1") and lines[-1].endswith(".h5")
    assert hud.wrap_lines(text, font, 2000) == [text]
    surface = pygame.Surface((260, 200))
    hud.draw_message(surface, surface.get_rect(), text)  # no exception, inside the surface

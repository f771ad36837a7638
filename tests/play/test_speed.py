"""Frame advance and speed changes in the play window, driven by real pygame events, and the
per-step rate the episode file keeps."""

from __future__ import annotations

import numpy as np
import pygame
import pytest

from demostudio.episode import load_episode
from demostudio.play import PlayConfig, build_session
from demostudio.play.speed import SPEEDS, RateLog, Speed, step_rates
from demostudio.play.timing import RateClock

from .helpers import FAST, post_key, tap, ticks
from .helpers import play_session as session


def save(s):
    tap(pygame.K_END)
    s.tick()
    data = load_episode(s.env.wait_saved()[-1])
    s.quit(False)
    s.close()
    return data


def test_frame_advance_records_exactly_one_step_with_the_held_keys(tmp_path):
    s = session(tmp_path)
    ticks(s, 3)
    tap(pygame.K_p)
    post_key(pygame.K_RIGHT)
    ticks(s, 5)
    assert s.steps == 3
    tap(pygame.K_PERIOD)
    ticks(s, 5)
    assert s.steps == 4  # one press, one step, however many ticks follow
    post_key(pygame.K_RIGHT, down=False)
    post_key(pygame.K_LEFT)
    tap(pygame.K_PERIOD)
    ticks(s, 3)
    assert s.steps == 5
    post_key(pygame.K_LEFT, down=False)
    tap(pygame.K_p)
    ticks(s, 2)
    data = save(s)
    assert data.actions.tolist() == [1, 1, 1, 2, 0, 1, 1]
    assert data.keys == [[], [], [], ["right"], ["left"], [], []]
    s_attrs = data.summary.attrs
    assert s_attrs["fps"] == FAST
    assert s_attrs["speed_changes"] == [[3, None], [5, FAST]]
    rates = step_rates(s_attrs["fps"], s_attrs["speed_changes"], 7)
    assert np.isnan(rates[3:5]).all() and (rates[[0, 1, 2, 5, 6]] == FAST).all()


def test_speed_keys_change_the_rate_and_the_file_records_it(tmp_path):
    s = session(tmp_path, fps=20.0)
    ticks(s, 8)
    tap(pygame.K_LEFTBRACKET)
    tap(pygame.K_LEFTBRACKET)  # x0.75, then x0.5
    ticks(s, 8)
    assert s.speed.fps == 10.0 and s.clock.period == pytest.approx(1 / 10)
    assert s.hud_info().target_fps == 10.0 and s.hud_info().speed == 0.5
    tap(pygame.K_RIGHTBRACKET)
    ticks(s, 4)
    data = save(s)
    attrs = data.summary.attrs
    assert attrs["fps"] == 20.0
    assert attrs["speed_changes"] == [[8, 10.0], [16, 15.0]]
    rates = step_rates(attrs["fps"], attrs["speed_changes"], data.summary.length)
    assert rates.tolist() == [20.0] * 8 + [10.0] * 8 + [15.0] * 4
    # The timestamps agree: the slow steps took at least their 1/10 s each (a lower bound
    # that a busy machine cannot break; the exact pacing is checked with a fake clock below).
    assert np.diff(data.timestamps)[10:16].mean() >= 0.09


def test_the_loop_waits_one_period_of_the_new_rate(tmp_path):
    s = session(tmp_path, fps=20.0)
    clock = {"now": 0.0, "slept": 0.0}

    def sleep(dt):
        clock["now"] += dt
        clock["slept"] += dt

    s.clock = RateClock(20.0, now=lambda: clock["now"], sleep=sleep)
    ticks(s, 4)
    assert clock["slept"] == pytest.approx(4 / 20)
    tap(pygame.K_LEFTBRACKET)
    tap(pygame.K_LEFTBRACKET)
    s.tick()  # the change restarts the schedule: one period of the new rate
    clock["slept"] = 0.0
    ticks(s, 4)
    assert clock["slept"] == pytest.approx(4 / 10)
    s.quit(False)
    s.close()


def test_a_new_episode_starts_at_the_current_speed(tmp_path):
    s = session(tmp_path, fps=100.0)
    tap(pygame.K_RIGHTBRACKET)  # before the first step: the file's fps is the new rate
    ticks(s, 3)
    first = save_keep(s)
    assert first.summary.fps == 150.0 and "speed_changes" not in first.summary.attrs
    ticks(s, 2)
    data = save(s)
    assert data.summary.fps == 150.0 and "speed_changes" not in data.summary.attrs


def save_keep(s):
    tap(pygame.K_END)
    s.tick()
    return load_episode(s.env.wait_saved()[-1])


def test_turn_based_ignores_speed_and_frame_advance(tmp_path):
    cfg = PlayConfig(env="MiniGrid-Empty-5x5-v0", out=tmp_path / "d", countdown=0, player="t")
    s = build_session(cfg)
    s.new_episode()
    tap(pygame.K_RIGHTBRACKET)
    s.tick()
    assert s.speed.fps is None and "Turn-based" in s.message
    tap(pygame.K_p)
    tap(pygame.K_PERIOD)
    s.tick()
    assert s.steps == 0
    s.quit(False)
    s.close()


def test_speed_ladder_and_rate_log():
    sp = Speed(30.0)
    assert sp.fps == 30.0 and not Speed(None).change(1)
    for _ in range(20):
        sp.change(1)
    assert sp.factor == SPEEDS[-1] and not sp.change(1)
    log = RateLog(30.0)
    assert not log.note(0, 30.0) and log.note(4, None) and not log.note(5, None)
    assert log.note(6, 60.0) and log.changes == [[4, None], [6, 60.0]]


@pytest.mark.parametrize(
    "bad",
    [[[1]], [[2, 10.0], [2, 5.0]], [["1", 10.0]], [[1, -3.0]], [[True, 5.0]], [[1, "x"]], [[5, 1]]],
)
def test_step_rates_rejects_malformed_changes(bad):
    with pytest.raises(ValueError, match=r"speed_changes\[\d\]: expected"):
        step_rates(10.0, bad, 5)
    assert step_rates(None, None, 2).shape == (2,)

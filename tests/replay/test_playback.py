"""The pure playback clock and the key bindings."""

from __future__ import annotations

import pygame
import pytest

from demostudio.replay import SPEEDS, Playback
from demostudio.replay.controls import Command, apply_playback, command_for


def test_step_jump_and_clamp():
    pb = Playback(n_frames=101, fps=30)
    pb.step(1)
    pb.step(10)
    assert pb.frame == 11
    pb.step(100)
    assert pb.frame == 100
    pb.step(-1000)
    assert pb.frame == 0
    pb.end()
    assert pb.frame == 100
    pb.home()
    assert pb.frame == 0


def test_stepping_pauses():
    pb = Playback(n_frames=50, fps=30)
    pb.toggle_play()
    assert pb.playing
    pb.step(1)
    assert not pb.playing and pb.frame == 1


def test_time_based_playback_skips_frames_at_8x():
    pb = Playback(n_frames=10_000, fps=60)
    pb.toggle_play()
    assert pb.tick(0.5) == 30  # 1x: 30 frames in half a second
    pb.set_speed(8.0)
    moved = pb.tick(1 / 60)  # one 60 Hz redraw at 8x moves 8 frames
    assert moved == 8 and pb.frame == 38
    pb.set_speed(0.25)
    for _ in range(4):
        pb.tick(1 / 60)
    assert pb.frame == 39  # 4 redraws at 0.25x are one frame


def test_speed_range_and_limits():
    pb = Playback(n_frames=10, fps=30)
    for _ in range(10):
        pb.faster()
    assert pb.speed == max(SPEEDS) == 8.0
    for _ in range(10):
        pb.slower()
    assert pb.speed == min(SPEEDS) == 0.25
    with pytest.raises(ValueError, match="expected a speed"):
        pb.set_speed(3.0)


def test_reverse_plays_backwards_and_stops_at_start():
    pb = Playback(n_frames=100, fps=10)
    pb.seek(50)
    pb.toggle_reverse()
    assert pb.frame == 50
    pb.toggle_play()
    pb.tick(0.05)  # half a frame: frame 50 is still up
    assert pb.frame == 50
    pb.tick(1.0)
    assert pb.frame == 40
    pb.tick(100.0)
    assert pb.frame == 0 and not pb.playing
    pb.toggle_play()  # playing in reverse from the start starts over from the end
    assert pb.playing and pb.frame == 99


def test_playback_stops_at_end_and_restarts():
    pb = Playback(n_frames=20, fps=10)
    pb.toggle_play()
    pb.tick(5.0)
    assert pb.frame == 19 and not pb.playing
    pb.toggle_play()
    assert pb.frame == 0 and pb.playing


def test_in_out_marks_select_a_range():
    pb = Playback(n_frames=100, fps=30)
    assert pb.selection() == (0, 99)
    pb.seek(10)
    pb.set_in()
    pb.seek(40)
    pb.set_out()
    assert pb.selection() == (10, 40)
    pb.seek(60)
    pb.set_in()  # an in mark after the out mark: the marks swap, neither is lost
    assert pb.selection() == (40, 60)
    pb.clear_marks()
    pb.seek(122 - 40)
    pb.set_in()
    pb.seek(30)
    pb.set_out()  # O before I: the range is 30..82, not 0..30
    assert pb.selection() == (30, 82)
    pb.clear_marks()
    assert pb.selection() == (0, 99)


def test_loop_wraps_inside_the_marked_range_and_shows_every_frame():
    pb = Playback(n_frames=100, fps=10)
    pb.seek(10)
    pb.set_in()
    pb.seek(14)
    pb.set_out()
    pb.toggle_loop()
    pb.seek(10)
    pb.toggle_play()
    shown = []
    for _ in range(12):
        shown.append(pb.frame)
        pb.tick(0.1)  # one frame at 10 fps
    assert shown == [10, 11, 12, 13, 14, 10, 11, 12, 13, 14, 10, 11] and pb.playing
    pb.toggle_reverse()  # at 12 going back: 12 11 10 14 13 ...
    shown = []
    for _ in range(6):
        shown.append(pb.frame)
        pb.tick(0.1)
    assert shown == [12, 11, 10, 14, 13, 12]
    # a long tick wraps by the remainder: 8x for a second = 80 frames = 16 turns of 5
    pb.toggle_reverse()
    pb.seek(11)
    pb.set_speed(8.0)
    pb.tick(1.0)
    assert pb.frame == 11 and pb.playing


def test_loop_plays_into_the_range_and_loops_the_whole_episode_without_marks():
    pb = Playback(n_frames=30, fps=10)
    pb.seek(25)
    pb.set_in()
    pb.seek(27)
    pb.set_out()
    pb.toggle_loop()
    pb.seek(20)  # before the range: plays on into it, then loops there
    pb.toggle_play()
    shown = []
    for _ in range(10):
        shown.append(pb.frame)
        pb.tick(0.1)
    assert shown == [20, 21, 22, 23, 24, 25, 26, 27, 25, 26]
    pb.clear_marks()
    pb.seek(28)
    shown = []
    for _ in range(4):
        shown.append(pb.frame)
        pb.tick(0.1)
    assert shown == [28, 29, 0, 1]
    pb.toggle_loop()  # off again: stops at the end
    pb.seek(28)
    pb.tick(1.0)
    assert pb.frame == 29 and not pb.playing


def test_bad_construction():
    with pytest.raises(ValueError, match="expected at least one frame"):
        Playback(n_frames=0, fps=30)
    with pytest.raises(ValueError, match="expected fps > 0"):
        Playback(n_frames=5, fps=0)


def test_bindings_respect_modifiers():
    assert command_for(pygame.K_RIGHT) is Command.STEP_FORWARD
    assert command_for(pygame.K_RIGHT, pygame.KMOD_LSHIFT) is Command.JUMP_FORWARD_10
    assert command_for(pygame.K_RIGHT, pygame.KMOD_LCTRL) is Command.JUMP_FORWARD_100
    assert command_for(pygame.K_x, pygame.KMOD_SHIFT) is Command.EXPORT_GIF
    assert command_for(pygame.K_EQUALS, pygame.KMOD_SHIFT) is Command.FASTER  # "+" on US keys
    assert command_for(pygame.K_F12) is None


def test_apply_playback_only_handles_playback_commands():
    pb = Playback(n_frames=500, fps=30)
    assert apply_playback(Command.JUMP_FORWARD_100, pb) and pb.frame == 100
    assert apply_playback(Command.JUMP_BACK_10, pb) and pb.frame == 90
    assert apply_playback(Command.REVERSE, pb) and pb.reverse
    assert not apply_playback(Command.VERIFY, pb)

"""The viewer's pure state update, fed synthetic pygame events: no window, no files."""

from __future__ import annotations

import pygame
import pytest

from demostudio.replay.controls import Command, command_for, help_lines
from demostudio.replay.playback import Playback
from demostudio.replay.state import (
    Confirm,
    Do,
    Prompt,
    Request,
    ViewerState,
    apply_command,
    process_event,
)


class Geometry:
    """A 1000 px window: the list is x < 300, the timeline y >= 500 with frame = x - 300."""

    def on_timeline(self, pos):
        return pos[0] >= 300 and pos[1] >= 500

    def frame_at(self, x):
        return max(0, x - 300)

    def on_list(self, pos):
        return pos[0] < 300

    def list_row(self, pos):
        return pos[1] // 100 if self.on_list(pos) else None


GEOMETRY = Geometry()


def key(k: int, mod: int = 0) -> pygame.event.Event:
    return pygame.event.Event(pygame.KEYDOWN, key=k, mod=mod, unicode="")


def feed(state: ViewerState, *events: pygame.event.Event) -> list[Request]:
    for event in events:
        process_event(state, event, GEOMETRY)
    return state.take_requests()


@pytest.fixture
def state() -> ViewerState:
    return ViewerState(playback=Playback(n_frames=200, fps=30))


def test_playback_keys_move_the_clock_and_queue_nothing(state):
    assert feed(state, key(pygame.K_RIGHT), key(pygame.K_RIGHT, pygame.KMOD_LSHIFT)) == []
    assert state.playback.frame == 11
    feed(state, key(pygame.K_RIGHT, pygame.KMOD_LCTRL), key(pygame.K_END))
    assert state.playback.frame == 199
    feed(state, key(pygame.K_HOME), key(pygame.K_i), key(pygame.K_RIGHT), key(pygame.K_o))
    assert state.playback.selection() == (0, 1)
    feed(state, key(pygame.K_SPACE), key(pygame.K_RIGHTBRACKET), key(pygame.K_r))
    assert state.playback.playing and state.playback.speed == 2.0 and state.playback.reverse


def test_toggles_flip_flags_and_the_list_asks_for_a_relayout(state):
    assert feed(state, key(pygame.K_TAB), key(pygame.K_h)) == []
    assert not state.show_overlay and state.show_help
    assert feed(state, key(pygame.K_l)) == [Request(Do.RELAYOUT)]
    assert not state.show_list
    assert feed(state, key(pygame.K_l, pygame.KMOD_SHIFT)) == []  # Shift+L loops instead
    assert state.playback.loop and not state.show_list


@pytest.mark.parametrize(
    ("k", "mod", "wanted"),
    [
        (pygame.K_DOWN, 0, Request(Do.MOVE, 1)),
        (pygame.K_n, 0, Request(Do.MOVE, 1)),
        (pygame.K_PAGEUP, 0, Request(Do.MOVE, -1)),
        (pygame.K_g, 0, Request(Do.TAG, ("good", "bad"))),
        (pygame.K_b, 0, Request(Do.TAG, ("bad", "good"))),
        (pygame.K_t, 0, Request(Do.EDIT_TAGS)),
        (pygame.K_m, 0, Request(Do.EDIT_NOTES)),
        (pygame.K_DELETE, 0, Request(Do.ASK_DELETE)),
        (pygame.K_v, 0, Request(Do.VERIFY)),
        (pygame.K_j, 0, Request(Do.JUMP_DIVERGENCE)),
        (pygame.K_x, 0, Request(Do.EXPORT, "mp4")),
        (pygame.K_x, pygame.KMOD_RSHIFT, Request(Do.EXPORT, "gif")),
        (pygame.K_s, 0, Request(Do.SAVE_PNG)),
        (pygame.K_k, 0, Request(Do.TRIM, False)),
        (pygame.K_k, pygame.KMOD_LSHIFT, Request(Do.TRIM, True)),
        (pygame.K_F5, 0, Request(Do.RESCAN)),
        (pygame.K_q, 0, Request(Do.QUIT)),
        (pygame.K_ESCAPE, 0, Request(Do.QUIT)),
    ],
)
def test_keys_that_touch_files_or_the_window_queue_requests(state, k, mod, wanted):
    assert feed(state, key(k, mod)) == [wanted]
    assert state.playback.frame == 0


def test_without_an_episode_playback_keys_do_nothing():
    state = ViewerState()
    assert feed(state, key(pygame.K_SPACE), key(pygame.K_RIGHT), key(pygame.K_HOME)) == []
    assert feed(state, key(pygame.K_k)) == [Request(Do.TRIM, False)]  # the window says why not


def test_the_trim_keys_are_unused_elsewhere_and_in_the_help():
    assert command_for(pygame.K_k) is Command.TRIM
    assert command_for(pygame.K_k, pygame.KMOD_SHIFT) is Command.TRIM_IDLE
    keys = dict(help_lines())
    assert "trim" in keys["K"] and "idle" in keys["Shift+K"]


def test_prompt_takes_every_key_until_enter(state):
    state.dialog = Prompt("Tags", "good", Do.SAVE_TAGS)
    requests = feed(
        state,
        key(pygame.K_BACKSPACE),
        pygame.event.Event(pygame.TEXTINPUT, text="se, q"),
        key(pygame.K_q),  # a typed q does not quit
        key(pygame.K_RIGHT),  # nor does an arrow move the clock
    )
    assert requests == [] and state.dialog.text == "goose, q" and state.playback.frame == 0
    assert feed(state, key(pygame.K_RETURN)) == [Request(Do.SAVE_TAGS, "goose, q")]
    assert state.dialog is None


def test_prompt_escape_cancels_without_quitting(state):
    state.dialog = Prompt("Notes", "", Do.SAVE_NOTES)
    feed(state, pygame.event.Event(pygame.TEXTINPUT, text="x"))
    assert feed(state, key(pygame.K_ESCAPE)) == [] and state.dialog is None
    assert state.running


def test_confirm_yes_and_no(state):
    state.dialog = Confirm("Delete?", "file.h5", Request(Do.DELETE))
    assert feed(state, key(pygame.K_SPACE)) == [] and state.dialog is not None
    assert feed(state, key(pygame.K_n)) == [] and state.dialog is None
    state.dialog = Confirm("Delete?", "file.h5", Request(Do.DELETE))
    assert feed(state, key(pygame.K_y)) == [Request(Do.DELETE)] and state.dialog is None


def test_click_and_drag_on_the_timeline_seek_and_resume_playing(state):
    feed(state, key(pygame.K_SPACE))
    down = pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=(340, 550), button=1)
    assert feed(state, down) == []
    assert state.playback.frame == 40 and not state.playback.playing and state.dragging
    move = pygame.event.Event(pygame.MOUSEMOTION, pos=(390, 700), rel=(50, 150), buttons=(1, 0, 0))
    feed(state, move)
    assert state.playback.frame == 90 and state.hover_x == 390
    feed(state, pygame.event.Event(pygame.MOUSEBUTTONUP, pos=(390, 700), button=1))
    assert state.playback.playing and not state.dragging
    feed(state, pygame.event.Event(pygame.MOUSEMOTION, pos=(350, 100), rel=(0, 0), buttons=(0,)))
    assert state.hover_x is None and state.playback.frame == 90


def test_click_on_a_list_row_selects_it(state):
    click = pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=(50, 250), button=1)
    assert feed(state, click) == [Request(Do.SELECT, 2)]
    state.show_list = False
    assert feed(state, click) == []


def test_wheel_scrolls_what_is_under_the_pointer(state):
    over_list = pygame.event.Event(pygame.MOUSEMOTION, pos=(10, 10), rel=(0, 0), buttons=(0,))
    wheel = pygame.event.Event(pygame.MOUSEWHEEL, x=0, y=-2)
    assert feed(state, over_list, wheel) == [Request(Do.SCROLL_LIST, 2)]
    over_frame = pygame.event.Event(pygame.MOUSEMOTION, pos=(600, 10), rel=(0, 0), buttons=(0,))
    assert feed(state, over_frame, wheel) == []
    assert state.playback.frame == 2


def test_window_close_and_resize():
    state = ViewerState()
    resize = pygame.event.Event(pygame.VIDEORESIZE, size=(800, 500), w=800, h=500)
    assert feed(state, resize) == [Request(Do.RELAYOUT)]
    assert feed(state, pygame.event.Event(pygame.QUIT)) == [Request(Do.QUIT)]
    assert not state.running


def test_apply_command_is_what_a_key_does(state):
    apply_command(state, Command.JUMP_FORWARD_10)
    apply_command(state, Command.TRIM_IDLE)
    assert state.playback.frame == 10 and state.take_requests() == [Request(Do.TRIM, True)]

"""The pure event update of the play window."""

from __future__ import annotations

import pygame

from demostudio.play.state import Request, SessionState, process_event

from .helpers import key_event

GAME = frozenset({"left", "right", "up", "space"})


def feed(state, *events, game=GAME, turn_based=False):
    for e in events:
        process_event(state, e, game, turn_based)
    return state


def test_held_keys_in_press_order():
    s = feed(SessionState(), key_event(pygame.K_LEFT), key_event(pygame.K_SPACE))
    assert s.held == ["left", "space"]
    feed(s, key_event(pygame.K_LEFT, down=False), key_event(pygame.K_RIGHT))
    assert s.held == ["space", "right"]
    assert s.requests == [] and not s.turns


def test_unbound_keys_are_not_game_keys():
    s = feed(SessionState(), key_event(pygame.K_x))
    assert s.held == [] and s.requests == []


def test_turn_based_queues_each_press_with_the_keys_held():
    s = feed(
        SessionState(),
        key_event(pygame.K_UP),
        key_event(pygame.K_UP, down=False),
        key_event(pygame.K_LEFT),
        key_event(pygame.K_SPACE),
        turn_based=True,
    )
    assert s.turns == [("up",), ("left",), ("left", "space")]


def test_pause_help_and_frozen():
    s = feed(SessionState(), key_event(pygame.K_p))
    assert s.paused and s.frozen
    feed(s, key_event(pygame.K_PAUSE))
    assert not s.paused and not s.frozen
    feed(s, key_event(pygame.K_F1))
    assert s.help and s.frozen
    feed(s, key_event(pygame.K_h))
    assert not s.help
    # No presses are queued while frozen (turn-based).
    feed(s, key_event(pygame.K_p), key_event(pygame.K_UP), turn_based=True)
    assert s.turns == []


def test_game_key_map_may_take_h_and_p_but_not_f1():
    game = GAME | {"p", "h", "f1"}
    s = feed(SessionState(), key_event(pygame.K_p), key_event(pygame.K_h), game=game)
    assert s.held == ["p", "h"] and not s.paused and not s.help
    feed(s, key_event(pygame.K_F1), game=game)
    assert s.help


def test_control_requests():
    s = feed(
        SessionState(),
        key_event(pygame.K_BACKSPACE),
        key_event(pygame.K_END),
        key_event(pygame.K_F12),
        key_event(pygame.K_EQUALS),
        key_event(pygame.K_KP_MINUS),
        pygame.event.Event(pygame.QUIT),
    )
    assert s.take_requests() == [
        Request.RESTART,
        Request.END_EPISODE,
        Request.SCREENSHOT,
        Request.ZOOM_IN,
        Request.ZOOM_OUT,
        Request.QUIT,
    ]
    assert s.requests == []


def test_escape_asks_then_enter_keeps_d_discards_escape_and_others_go_back():
    s = feed(SessionState(), key_event(pygame.K_ESCAPE))
    assert s.confirm_quit and s.frozen
    feed(s, key_event(pygame.K_RETURN))
    assert s.take_requests() == [Request.QUIT_KEEP] and not s.confirm_quit
    feed(s, key_event(pygame.K_ESCAPE), key_event(pygame.K_d))
    assert s.take_requests() == [Request.QUIT_DISCARD]
    # Esc twice (a "get me out" reflex) goes back to the game: nothing is thrown away
    feed(s, key_event(pygame.K_ESCAPE), key_event(pygame.K_ESCAPE))
    assert s.take_requests() == [] and not s.confirm_quit
    for key in (pygame.K_x, pygame.K_q, pygame.K_n):
        feed(s, key_event(pygame.K_ESCAPE), key_event(key))
        assert s.take_requests() == [] and not s.confirm_quit
    # the window closed while asking: keep the episode and quit
    feed(s, key_event(pygame.K_ESCAPE), pygame.event.Event(pygame.QUIT))
    assert s.take_requests() == [Request.QUIT_KEEP] and not s.confirm_quit
    # Esc with help open closes help instead.
    feed(s, key_event(pygame.K_F1), key_event(pygame.K_ESCAPE))
    assert not s.help and not s.confirm_quit


def test_focus_loss_releases_keys_and_resize_is_recorded():
    s = feed(SessionState(), key_event(pygame.K_LEFT))
    feed(s, pygame.event.Event(pygame.WINDOWFOCUSLOST))
    assert s.held == [] and not s.paused
    process_event(s, pygame.event.Event(pygame.WINDOWFOCUSLOST), GAME, False, True)
    assert not s.paused  # never focused yet (a window being created, a bare X server)
    process_event(s, pygame.event.Event(pygame.WINDOWFOCUSGAINED), GAME, False, True)
    process_event(s, pygame.event.Event(pygame.WINDOWFOCUSLOST), GAME, False, True)
    assert s.paused
    feed(s, pygame.event.Event(pygame.VIDEORESIZE, w=800, h=500, size=(800, 500)))
    assert s.resize == (800, 500)


def test_frame_advance_pauses_then_steps_once_per_press():
    s = feed(SessionState(), key_event(pygame.K_RIGHT), key_event(pygame.K_PERIOD))
    assert s.paused and s.requests == []  # running: the first press stops the game
    feed(s, key_event(pygame.K_PERIOD), key_event(pygame.K_PERIOD, down=False))
    feed(s, key_event(pygame.K_PERIOD))
    assert s.take_requests() == [Request.STEP_ONCE, Request.STEP_ONCE]
    assert s.held == ["right"]  # the keys held go with the step
    feed(s, key_event(pygame.K_F1), key_event(pygame.K_PERIOD))  # help showing: no step
    assert s.requests == []


def test_speed_keys():
    s = feed(SessionState(), key_event(pygame.K_RIGHTBRACKET), key_event(pygame.K_LEFTBRACKET))
    assert s.take_requests() == [Request.FASTER, Request.SLOWER]
    # A key map may bind them; then they are game keys.
    s = feed(SessionState(), key_event(pygame.K_LEFTBRACKET), game=GAME | {"["})
    assert s.held == ["["] and s.requests == []


def test_t_hands_control_over_only_when_an_agent_drives():
    s = feed(SessionState(), key_event(pygame.K_t))
    assert not s.person and s.requests == []  # keyboard play: T is nothing
    s = SessionState(can_take_over=True)
    feed(s, key_event(pygame.K_t))
    assert s.person
    feed(s, key_event(pygame.K_t, down=False), key_event(pygame.K_t))
    assert not s.person
    feed(s, key_event(pygame.K_t), game=GAME | {"t"})  # a key map that binds T keeps it
    assert not s.person and s.held == ["t"]

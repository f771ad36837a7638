"""Taking over from an agent in the watch window (T), driven by real pygame events: who acts,
what the agent is told, what the HUD says and who each recorded step is attributed to."""

from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np
import pygame
import pytest

from demostudio.episode import RecordEpisodes, load_episode, make_env
from demostudio.play import build_controller_session
from demostudio.ui import theme

from .helpers import FAST, post_key, tap, ticks


class FakeAgent:
    """Always pushes left (MountainCar action 0); records every call of the take-over hook."""

    name = "policy:fake"

    def __init__(self, with_taken: bool = True):
        self.calls: list[tuple] = []
        if not with_taken:
            self.taken = None  # a controller without the hook

    def reset(self, env, observation, info):
        self.calls.append(("reset",))

    def act(self, env, observation):
        self.calls.append(("act",))
        return 0

    def taken(self, action):
        self.calls.append(("taken", action))


def watch_session(tmp_path, agent, **kw):
    s = build_controller_session(
        "MountainCar-v0",
        agent,
        out_dir=tmp_path / "watch",
        episodes=None,
        fps=FAST,
        player="dee",
        takeover=True,
        **kw,
    )
    actors: list[str] = []
    s.env.set_actor = actors.append  # the recorder's who-acted API, observed
    s.new_episode()
    return s, actors


def test_several_takeovers_in_one_episode(tmp_path):
    agent = FakeAgent()
    s, actors = watch_session(tmp_path, agent)
    assert "AGENT (policy:fake) drives" in s.hud_info().control
    ticks(s, 3)
    tap(pygame.K_t)  # take over
    post_key(pygame.K_RIGHT)
    ticks(s, 4)
    assert s.hud_info().control.startswith("YOU drive") and s.hud_info().person
    assert s.hud_info().input == "keys RIGHT  (agent: 0)"
    tap(pygame.K_t)  # hand back, RIGHT still held: the agent drives
    ticks(s, 2)
    assert "AGENT" in s.hud_info().control and not s.hud_info().person
    tap(pygame.K_t)  # and take over again
    ticks(s, 3)
    post_key(pygame.K_RIGHT, down=False)
    tap(pygame.K_t)
    ticks(s, 1)
    tap(pygame.K_END)
    s.tick()
    data = load_episode(s.env.wait_saved()[-1])
    s.quit(False)
    s.close()

    assert data.actions.tolist() == [0] * 3 + [2] * 4 + [0] * 2 + [2] * 3 + [0]
    assert data.keys == [[]] * 3 + [["right"]] * 4 + [[]] * 2 + [["right"]] * 3 + [[]]
    assert data.summary.controller == "policy:fake" and data.summary.player == "dee"
    # the agent acted every step and was told each action the person played
    episode = agent.calls[1 : agent.calls.index(("reset",), 1)]  # (End started the next one)
    assert episode.count(("act",)) == 13
    assert [c for c in episode if c[0] == "taken"] == [("taken", 2)] * 7
    assert episode[3:5] == [("act",), ("taken", 2)]  # taken right after act
    # one set_actor at the start and at every switch (then the next episode's first step)
    assert actors[:5] == ["policy:fake", "person:dee", "policy:fake", "person:dee", "policy:fake"]


def test_hand_over_while_paused_and_frame_advance_as_the_person(tmp_path):
    agent = FakeAgent(with_taken=False)
    s, actors = watch_session(tmp_path, agent)
    ticks(s, 2)
    tap(pygame.K_p)
    tap(pygame.K_t)
    post_key(pygame.K_LEFT)
    ticks(s, 3)
    assert s.steps == 2 and actors == ["policy:fake"]  # nothing stepped, nobody announced
    tap(pygame.K_PERIOD)
    s.tick()
    assert s.steps == 3 and actors == ["policy:fake", "person:dee"]
    assert s.last_action == 0 and s.env.episode_steps == 3
    assert "You drive" in s.message
    s.quit(False)
    s.close()


def test_new_episode_starts_with_whoever_drives(tmp_path):
    s, actors = watch_session(tmp_path, FakeAgent(), env_kwargs={"max_episode_steps": 3})
    tap(pygame.K_t)
    ticks(s, 4)  # three steps end the episode; the fourth is the next episode's first
    assert len(s.env.saved) == 1 and s.steps == 1
    assert actors == ["person:dee", "person:dee"]  # the new file is told again
    s.quit(False)
    s.close()


def test_help_overlay_lists_t_and_the_game_keys(tmp_path, monkeypatch):
    s, _ = watch_session(tmp_path, FakeAgent())
    shown = {}

    def draw_help(surface, rect, title, rows, controls, notes):
        shown.update(rows=rows, controls=dict(controls), notes=notes)

    monkeypatch.setattr("demostudio.play.hud.draw_help", draw_help)
    tap(pygame.K_F1)
    s.tick()
    assert shown["controls"]["T"].startswith("take over")
    assert shown["controls"]["."].startswith("paused: step one frame")
    assert shown["controls"]["[ / ]"].startswith("slower / faster")
    assert any("RIGHT" in keys for keys, _ in shown["rows"])
    s.quit(False)
    s.close()


def test_screenshot_of_a_takeover_in_progress(tmp_path):
    s, _ = watch_session(tmp_path, FakeAgent())
    ticks(s, 5)
    hud_agent = pygame.surfarray.array3d(s.window.surface)[:, :54].copy()
    tap(pygame.K_t)
    post_key(pygame.K_RIGHT)
    ticks(s, 5)
    hud_person = pygame.surfarray.array3d(s.window.surface)[:, :54]

    # the control label changed colour: the person's is theme.WARN, the agent's theme.ACCENT
    def count(hud, color):
        return int((hud == np.array(color)).all(axis=-1).sum())

    assert count(hud_person, theme.WARN) > 300 > 3 * count(hud_agent, theme.WARN)
    assert count(hud_agent, theme.ACCENT) > 300 + count(hud_person, theme.ACCENT)
    path = s.window.screenshot(tmp_path / "takeover.png")  # look at it: /tmp/pytest-of-*/
    assert path.stat().st_size > 1000
    s.quit(False)
    s.close()


@pytest.mark.skipif(
    not hasattr(RecordEpisodes, "set_actor"), reason="the who-acted recording is not merged yet"
)
def test_the_file_says_who_acted(tmp_path):
    from demostudio.episode import person_mask

    s = build_controller_session(
        "MountainCar-v0", FakeAgent(), out_dir=tmp_path / "w", fps=FAST, player="dee", takeover=True
    )
    s.new_episode()
    ticks(s, 2)
    tap(pygame.K_t)
    ticks(s, 3)
    tap(pygame.K_t)
    ticks(s, 1)
    tap(pygame.K_END)
    s.tick()
    data = load_episode(s.env.wait_saved()[-1])
    s.close()
    assert person_mask(data.actors, data.actor_names).tolist() == [False] * 2 + [True] * 3 + [False]
    assert data.summary.takeovers == 1


def test_watch_command_takes_over_with_the_player_name(tmp_path, monkeypatch, capsys):
    """``demostudio watch RUN --player`` wires the take-over: the fake agent itself presses T
    (a real posted event) after its third step and hands back after its sixth."""
    from demostudio.cli import main

    class PressingAgent(FakeAgent):
        def act(self, env, observation):
            n = self.calls.count(("act",))
            if n in (3, 6):
                tap(pygame.K_t)
            if n == 3:
                post_key(pygame.K_RIGHT)
            return super().act(env, observation)

    agent = PressingAgent()
    kwargs = {"max_episode_steps": 10}
    restored = SimpleNamespace(
        controller=agent,
        env_id="MountainCar-v0",
        env_kwargs=kwargs,
        make_env=lambda render_mode=None: make_env(
            "MountainCar-v0", kwargs, render_mode=render_mode
        ),
    )
    monkeypatch.setattr("demostudio.cli.checkpoint_cmds._restore", lambda *a: restored)
    seen: list[str] = []
    monkeypatch.setattr(RecordEpisodes, "set_actor", lambda self, name: seen.append(name),
                        raising=False)  # fmt: skip
    rec = tmp_path / "rec"
    rc = main(["watch", "run", "--episodes", "1", "--fps", "500", "--record", str(rec),
               "--player", "ann"])  # fmt: skip
    assert rc == 0
    data = load_episode(next((rec / "MountainCar-v0").glob("*.h5")))
    assert data.summary.player == "ann" and data.summary.length == 10
    # T is read at the next tick: the person drives steps 4-6, the agent the rest
    assert data.actions.tolist() == [0] * 4 + [2] * 3 + [0] * 3
    assert seen == ["policy:fake", "person:ann", "policy:fake"]
    assert [c for c in agent.calls if c[0] == "taken"] == [("taken", 2)] * 3
    # the summary: each episode's return, length, who drove and file (nothing waits: the
    # dummy driver shows no window, so no start countdown and no hold at the end)
    out = capsys.readouterr().out.splitlines()
    path = next((rec / "MountainCar-v0").glob("*.h5"))
    assert out[0] == (
        f"episode 1: return -10.00  length 10  the agent (policy:fake) and you (3 of 10 steps)"
        f"  {path}"
    )
    assert out[1] == f"1 episode(s) saved in {rec / 'MountainCar-v0'}, 0 not saved"


def test_closing_the_window_asks_only_when_the_person_drove(tmp_path):
    """Watching: an episode the agent alone played is not a person's work (closing the window
    quits, it is not saved); once the person took over, closing asks as in play, and closing
    again keeps it."""
    s, _ = watch_session(tmp_path, FakeAgent())
    ticks(s, 4)
    pygame.event.post(pygame.event.Event(pygame.QUIT))
    assert not s.tick()
    s.close()
    assert s.env.saved == [] and s.result().log[-1].how == "not saved"

    s, _ = watch_session(tmp_path, FakeAgent())
    ticks(s, 3)
    tap(pygame.K_t)
    post_key(pygame.K_RIGHT)
    ticks(s, 4)
    pygame.event.post(pygame.event.Event(pygame.QUIT))
    assert s.tick() and s.state.confirm_quit  # the person's stretch: asked
    tap(pygame.K_ESCAPE)  # back to the game
    ticks(s, 1)
    assert not s.state.confirm_quit
    pygame.event.post(pygame.event.Event(pygame.QUIT))
    pygame.event.post(pygame.event.Event(pygame.QUIT))  # closed again: kept
    assert not s.tick()
    s.close()
    log = s.result().log
    assert len(s.env.saved) == 1 and log[-1].how == "saved at quit"
    assert log[-1].person_steps == 5 and log[-1].steps == 8
    assert log[-1].driver() == "the agent (policy:fake) and you (5 of 8 steps)"


def test_hold_at_end_waits_for_a_key_and_shows_the_summary(tmp_path):
    s = build_controller_session(
        "MountainCar-v0", FakeAgent(), episodes=2, fps=FAST, env_kwargs={"max_episode_steps": 3}
    )
    s.opts.hold_at_end = True
    s.opts.start_countdown = 0.05
    s.new_episode()
    assert s.countdown_end is not None  # time to take over before the agent starts
    while s.tick():
        pass
    assert s.episodes_done == 2 and not s.quitting
    pygame.time.set_timer(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_SPACE, mod=0), 100, 1)
    started = time.monotonic()
    s.hold()  # returns on Space
    assert 0.05 < time.monotonic() - started < 5
    lines = s._summary_lines()
    assert lines[0].startswith("1: return -3, 3 steps, the agent (policy:fake)")
    assert lines[-1].startswith("Esc / Enter / Space")
    s.close()

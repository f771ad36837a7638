"""The launcher driven by real pygame events: picking a game, typing an env id and the player,
starting a game, opening the replay viewer, recording counts."""

from __future__ import annotations

from pathlib import Path

import pygame
import pytest

import demostudio.replay
from demostudio.assets import SAMPLE_DEMOS
from demostudio.launcher import Launcher, view
from demostudio.launcher import window as launcher_window
from demostudio.launcher.games import BUNDLED_GAMES, count_recordings
from demostudio.launcher.state import Focus

from .helpers import tap


def type_text(text: str) -> None:
    pygame.event.post(pygame.event.Event(pygame.TEXTINPUT, text=text))


def click(pos) -> None:
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=pos, button=1))
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONUP, pos=pos, button=1))


def pump(launcher: Launcher) -> bool:
    alive = launcher.handle_events(pygame.event.get())
    if alive:
        launcher.draw()
    return alive


@pytest.fixture
def games(monkeypatch):
    calls = []

    def fake_start(env_id, root, player):
        calls.append((env_id, root, player))
        return f"played {env_id}"

    monkeypatch.setattr(launcher_window, "start_game", fake_start)
    return calls


@pytest.fixture
def viewer(monkeypatch):
    calls = []
    monkeypatch.setattr(demostudio.replay, "run_viewer", calls.append, raising=False)
    return calls


def test_pick_a_game_with_arrows_and_enter(tmp_path, games):
    launcher = Launcher(tmp_path, player="ana")
    tap(pygame.K_DOWN)
    tap(pygame.K_DOWN)
    tap(pygame.K_RETURN)
    assert pump(launcher)
    assert games == [(BUNDLED_GAMES[2].env_id, tmp_path, "ana")]
    assert launcher.state.status == f"played {BUNDLED_GAMES[2].env_id}"


def test_type_any_env_id_and_player_then_click_play(tmp_path, games):
    launcher = Launcher(tmp_path, player="")
    lay = launcher.layout
    click(lay.env_field.center)
    tap(pygame.K_u, mod=pygame.KMOD_CTRL)  # clear the field
    type_text("ALE/Freeway-v5")
    tap(pygame.K_TAB)  # -> player
    type_text("bob")
    tap(pygame.K_BACKSPACE)
    type_text("b!")
    assert pump(launcher)
    assert launcher.state.env_text == "ALE/Freeway-v5" and launcher.state.player == "bob!"
    assert launcher.state.folder_text == str(tmp_path / "ALE-Freeway-v5")
    click(lay.play_button.center)
    assert pump(launcher)
    assert games == [("ALE/Freeway-v5", tmp_path, "bob!")]


def test_double_click_a_game_plays_it(tmp_path, games):
    launcher = Launcher(tmp_path)
    row = launcher.layout.rows[6]
    click(row.center)
    assert pump(launcher)
    assert games == [] and launcher.state.selected == 6
    click(row.center)
    assert pump(launcher)
    assert games == [(BUNDLED_GAMES[6].env_id, tmp_path, launcher.state.player)]


def test_open_replay_on_a_folder(tmp_path, viewer):
    folder = tmp_path / "MountainCar-v0"
    folder.mkdir()
    launcher = Launcher(tmp_path)
    tap(pygame.K_DOWN)  # MountainCar-v0: the replay folder follows the selected game
    tap(pygame.K_r, mod=pygame.KMOD_CTRL)
    assert pump(launcher)
    assert viewer == [[folder]]
    # A typed folder is used as typed; the button works too.
    other = tmp_path / "other"
    other.mkdir()
    click(launcher.layout.folder_field.center)
    tap(pygame.K_u, mod=pygame.KMOD_CTRL)
    type_text(str(other))
    assert pump(launcher)
    assert launcher.state.focus is Focus.FOLDER
    click(launcher.layout.replay_button.center)
    assert pump(launcher)
    assert viewer == [[folder], [other]]


def test_replay_of_a_missing_folder_is_an_error_line(tmp_path, viewer):
    launcher = Launcher(tmp_path)
    tap(pygame.K_r, mod=pygame.KMOD_CTRL)  # a fresh user: no recordings of CartPole yet
    assert pump(launcher)
    assert viewer == []
    status = launcher.state.status
    assert launcher.state.status_error and status.startswith("No recordings of CartPole-v1 yet")
    assert str(SAMPLE_DEMOS / "CartPole-v1") in status  # the shipped samples
    click(launcher.layout.folder_field.center)
    type_text(str(tmp_path / "typo"))  # the click selected the folder: typing replaces it
    tap(pygame.K_r, mod=pygame.KMOD_CTRL)
    assert pump(launcher)
    assert launcher.state.status == f"{tmp_path / 'typo'}: no such folder or file"


def test_click_or_ctrl_a_selects_a_fields_text_and_typing_replaces_it(tmp_path, games):
    launcher = Launcher(tmp_path)
    lay = launcher.layout
    tap(pygame.K_DOWN, mod=0)  # pick MountainCar-v0
    click(lay.env_field.center)
    type_text("CartPole-v1")  # not appended to the picked id
    assert pump(launcher)
    assert launcher.state.env_text == "CartPole-v1"
    tap(pygame.K_DOWN)  # focus stays in the field: no game is picked by the arrows
    type_text("x")
    assert pump(launcher)
    assert launcher.state.env_text == "CartPole-v1x"
    assert launcher.state.picked is None  # no row stays highlighted for a typed id
    tap(pygame.K_a, mod=pygame.KMOD_CTRL)
    type_text("Acrobot-v1")
    assert pump(launcher)
    assert launcher.state.env_text == "Acrobot-v1" and launcher.state.picked.title == "Acrobot"
    tap(pygame.K_a, mod=pygame.KMOD_CTRL)
    tap(pygame.K_BACKSPACE)  # Backspace clears the selected text
    assert pump(launcher)
    assert launcher.state.env_text == ""


def test_a_leftover_partial_is_pointed_out_with_recover(tmp_path):
    folder = tmp_path / "MountainCar-v0"
    folder.mkdir()
    (folder / "20260101-000000-000-abcd.h5.partial").write_bytes(b"")
    launcher = Launcher(tmp_path)
    assert launcher.partials["MountainCar-v0"] == 1 and launcher.counts["MountainCar-v0"] == 0
    status = launcher.state.status
    assert "1 unfinished recording(s) of MountainCar-v0" in status
    assert f"demostudio recover {folder}" in status
    launcher.draw()


def test_long_status_lines_wrap_inside_the_window(tmp_path):
    from demostudio.launcher import view
    from demostudio.ui import theme

    launcher = Launcher(tmp_path)
    long = tmp_path / ("very-long-folder-name-" * 6) / "MountainCar-v0"
    launcher.state.say(f"{long}: no such folder or file", error=True)
    launcher.draw()
    width = launcher.surface.get_width() - launcher.layout.replay_button.left - view.PAD
    lines = view._wrap(launcher.state.status, width, 13)
    assert len(lines) > 2 and "".join(lines).replace(" ", "") == launcher.state.status.replace(
        " ", ""
    )
    assert all(theme.font(13).size(line)[0] <= width for line in lines)


def test_unknown_env_is_reported_not_raised(tmp_path):
    launcher = Launcher(tmp_path)
    click(launcher.layout.env_field.center)
    tap(pygame.K_u, mod=pygame.KMOD_CTRL)
    type_text("Nope-v0")
    tap(pygame.K_RETURN)
    assert pump(launcher)
    assert launcher.state.status_error and "Nope-v0" in launcher.state.status


def test_escape_and_window_close_quit(tmp_path):
    launcher = Launcher(tmp_path)
    tap(pygame.K_ESCAPE)
    assert not pump(launcher)
    pygame.event.post(pygame.event.Event(pygame.QUIT))
    assert not pump(launcher)


def test_counts_and_a_real_game_started_from_the_launcher(tmp_path, monkeypatch):
    """Enter starts `demostudio play` for real; afterwards the count is refreshed and the
    launcher window is back."""
    import demostudio.play.run as play_run

    real_run_play = play_run.run_play
    seen = []

    def short_run_play(cfg):
        seen.append(cfg)
        cfg.countdown, cfg.fps, cfg.episodes, cfg.max_episode_steps = 0, 2000.0, 2, 3
        return real_run_play(cfg)

    monkeypatch.setattr(play_run, "run_play", short_run_play)
    launcher = Launcher(tmp_path, player="cy")
    assert launcher.counts["MountainCar-v0"] == 0
    tap(pygame.K_DOWN)
    tap(pygame.K_RETURN)
    assert pump(launcher)
    assert seen[0].env == "MountainCar-v0" and seen[0].player == "cy"
    assert launcher.counts["MountainCar-v0"] == 2 == count_recordings(tmp_path, "MountainCar-v0")
    assert "2 episode(s) saved" in launcher.state.status
    assert launcher.surface.get_size() == (view.WIDTH, view.HEIGHT)


def test_launcher_screenshot(tmp_path):
    (tmp_path / "CartPole-v1").mkdir()
    for i in range(3):
        (tmp_path / "CartPole-v1" / f"{i}.h5").write_bytes(b"")
    launcher = Launcher(tmp_path, player="dee")
    assert launcher.counts["CartPole-v1"] == 3
    launcher.draw()
    path = Path(tmp_path / "launcher.png")
    pygame.image.save(launcher.surface, str(path))
    pixels = pygame.surfarray.array3d(pygame.image.load(str(path)))
    assert pixels.reshape(-1, 3).std(axis=0).sum() > 10


@pytest.mark.timeout(60)
def test_the_real_replay_viewer_opens_and_hands_the_window_back(tmp_path):
    from demostudio.controllers import scripted_controller
    from demostudio.play import run_controller_window

    # (Not `demostudio record`: MountainCar's own close() calls pygame.quit().)
    run_controller_window(
        "MountainCar-v0",
        scripted_controller("MountainCar-v0"),
        out_dir=tmp_path / "MountainCar-v0",
        fps=5000,
        env_kwargs={"max_episode_steps": 20},
    )
    launcher = Launcher(tmp_path)
    tap(pygame.K_DOWN)  # MountainCar-v0
    tap(pygame.K_r, mod=pygame.KMOD_CTRL)
    pygame.time.set_timer(pygame.QUIT, 300, 1)  # closes the viewer once it is up
    assert pump(launcher)
    assert launcher.state.status == f"Closed the replay viewer on {tmp_path / 'MountainCar-v0'}"
    assert launcher.surface.get_size() == (view.WIDTH, view.HEIGHT)


def test_remembers_player_and_last_game(tmp_path, games):
    from demostudio.ui.settings import settings_path

    launcher = Launcher(tmp_path, player="")
    click(launcher.layout.player_field.center)
    tap(pygame.K_u, mod=pygame.KMOD_CTRL)
    type_text("eve")
    click(launcher.layout.rows[7].center)  # Pong
    tap(pygame.K_RETURN)
    assert pump(launcher)
    again = Launcher(tmp_path)
    assert again.state.player == "eve" and again.state.selected == 7
    assert again.state.env_text == BUNDLED_GAMES[7].env_id
    # A typed env id is remembered as typed; a bad settings file is reported, not fatal.
    again.state.env_text = "ALE/Freeway-v5"
    tap(pygame.K_RETURN)
    assert pump(again)
    assert Launcher(tmp_path).state.env_text == "ALE/Freeway-v5"
    settings_path().write_text("[1, 2]")
    broken = Launcher(tmp_path, player="x")
    assert broken.state.status_error and "expected a JSON object" in broken.state.status


def test_your_recordings_folder_is_shown_and_kept(tmp_path, games):
    from demostudio.launcher import view
    from demostudio.ui.settings import load_settings, recordings_root, remember_recordings

    mine = tmp_path / "mine"
    remember_recordings(mine)
    launcher = Launcher(recordings_root(), player="fay")
    assert launcher.state.root == mine
    launcher.draw()
    assert view._fit(str(mine), 10_000, 12) == str(mine)  # drawn whole when it fits
    assert view._fit(str(mine), 60, 12).startswith("…")
    tap(pygame.K_RETURN)
    assert pump(launcher)
    assert games[-1][1] == mine
    saved = load_settings()[0]
    assert saved.recordings == str(mine) and saved.player == "fay"  # playing keeps it


def test_every_game_row_shows_its_env_id_readably(tmp_path):
    """The env id under each title is 12 pt (10 pt read as specks), inside its row, clear
    of the family column, and the whole list fits above the window's bottom lines."""
    from demostudio.ui import theme

    launcher = Launcher(tmp_path, player="ana")
    lay = launcher.layout
    font = theme.font(view.ID_SIZE, mono=True)
    assert view.ID_SIZE >= 12
    for game, row in zip(BUNDLED_GAMES, lay.rows):
        width, height = font.size(game.env_id)
        assert row.top + 20 + height <= row.bottom + 2, game.env_id
        assert 10 + width < 270 - 8, game.env_id  # the family column starts at 270
    assert lay.rows[-1].bottom < launcher.surface.get_height() - 50
    launcher.draw()

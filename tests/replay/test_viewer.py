"""The viewer window driven with real pygame events: seeking, stepping, speeds, reverse,
episode switching, bad files, tags, deletion, overlay and help. (The pure state update is
tested on its own in test_state.py.)"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import h5py
import pygame
import pytest

from demostudio.cli import main
from demostudio.episode import read_summary
from demostudio.replay.playback import SPEEDS
from demostudio.ui import theme

from .conftest import SCREENSHOTS
from .helpers import click, drag, first_episode, press, type_text


@pytest.fixture
def viewer(viewer_factory, folder):
    """A viewer on the folder, moved to its first (oldest) episode."""
    return first_episode(viewer_factory([folder]))


def _bar_y(v) -> int:
    return v.timeline.rect.bottom - 12


def test_opens_folder_on_the_newest_episode(viewer_factory, folder, episodes):
    v = viewer_factory([folder])
    assert len(v.catalog) == 3
    assert v.episode.path == episodes[2]  # recorded last
    assert v.playback.frame == 0
    assert v.playback.n_frames == read_summary(episodes[2]).length + 1
    v.draw()
    # newest by recording time, not by name: the newest file renamed to sort first
    renamed = folder / "aaa-recorded-last.h5"
    episodes[2].rename(renamed)
    v2 = viewer_factory([folder])
    assert v2.episode.path == renamed


def test_click_on_timeline_seeks_to_that_frame(viewer):
    viewer.draw()  # lays the timeline out
    t = viewer.timeline
    for target in (0, 17, 50, viewer.playback.last):
        click(viewer, (t.x_of(target), _bar_y(viewer)))
        assert viewer.playback.frame == target
    click(viewer, (t.rect.x + 1, _bar_y(viewer)))  # left of the track clamps to frame 0
    assert viewer.playback.frame == 0
    click(viewer, (t.rect.right - 1, _bar_y(viewer)))
    assert viewer.playback.frame == viewer.playback.last


def test_drag_on_timeline_follows_the_mouse(viewer):
    viewer.draw()
    t, y = viewer.timeline, _bar_y(viewer)
    drag(viewer, (t.x_of(5), y), [(t.x_of(20), y), (t.x_of(40), y + 30)], release=False)
    assert viewer.playback.frame == 40  # vertical drift off the bar still seeks
    drag(viewer, (t.x_of(40), y), [(t.x_of(60), y)])
    assert viewer.playback.frame == 60
    pygame.event.post(
        pygame.event.Event(pygame.MOUSEMOTION, pos=(t.x_of(10), y), rel=(0, 0), buttons=(0, 0, 0))
    )
    viewer.pump()
    assert viewer.playback.frame == 60  # released: motion no longer seeks


def test_drag_pauses_and_resumes_playback(viewer):
    viewer.draw()
    press(viewer, pygame.K_SPACE)
    t, y = viewer.timeline, _bar_y(viewer)
    drag(viewer, (t.x_of(30), y), [(t.x_of(35), y)], release=False)
    assert not viewer.playback.playing
    viewer.update(0.5)
    assert viewer.playback.frame == 35
    pygame.event.post(pygame.event.Event(pygame.MOUSEBUTTONUP, pos=(t.x_of(35), y), button=1))
    viewer.pump()
    assert viewer.playback.playing


def test_step_and_jump_keys(viewer):
    last = viewer.playback.last
    press(viewer, pygame.K_RIGHT)
    assert viewer.playback.frame == 1
    press(viewer, pygame.K_RIGHT, times=5)  # holding the key: repeated KEYDOWNs
    assert viewer.playback.frame == 6
    press(viewer, pygame.K_LEFT)
    assert viewer.playback.frame == 5
    press(viewer, pygame.K_RIGHT, pygame.KMOD_LSHIFT)
    assert viewer.playback.frame == 15
    press(viewer, pygame.K_LEFT, pygame.KMOD_LSHIFT)
    assert viewer.playback.frame == 5
    press(viewer, pygame.K_RIGHT, pygame.KMOD_LCTRL)
    assert viewer.playback.frame == min(105, last)
    press(viewer, pygame.K_END)
    assert viewer.playback.frame == last
    press(viewer, pygame.K_RIGHT)
    assert viewer.playback.frame == last
    press(viewer, pygame.K_HOME)
    assert viewer.playback.frame == 0


def test_speed_keys_and_time_based_playback(viewer):
    pb = viewer.playback
    press(viewer, pygame.K_RIGHTBRACKET, times=10)
    assert pb.speed == 8.0
    press(viewer, pygame.K_SPACE)
    assert pb.playing
    viewer.update(1 / pb.fps)  # one frame time at 8x: 8 frames, 7 of them never shown
    assert pb.frame == 8
    press(viewer, pygame.K_LEFTBRACKET, times=10)
    assert pb.speed == 0.25
    viewer.update(2 / pb.fps)
    assert pb.frame == 8
    viewer.update(2 / pb.fps)
    assert pb.frame == 9
    press(viewer, pygame.K_EQUALS, pygame.KMOD_SHIFT, times=2)
    assert pb.speed == SPEEDS[2] == 1.0
    press(viewer, pygame.K_SPACE)
    assert not pb.playing


def test_reverse_playback(viewer):
    pb = viewer.playback
    press(viewer, pygame.K_END)
    press(viewer, pygame.K_r)
    assert pb.reverse
    press(viewer, pygame.K_SPACE)
    viewer.update(10 / pb.fps)
    assert pb.frame == pb.last - 10
    viewer.update(1000.0)
    assert pb.frame == 0 and not pb.playing
    viewer.draw()


def test_episode_switching_by_keys_and_list(viewer, episodes):
    press(viewer, pygame.K_RIGHT, times=3)
    press(viewer, pygame.K_DOWN)
    assert viewer.episode.path == episodes[1]
    assert viewer.playback.frame == 0
    press(viewer, pygame.K_n)
    assert viewer.episode.path == episodes[2]
    press(viewer, pygame.K_n)  # past the end stays on the last one
    assert viewer.episode.path == episodes[2]
    press(viewer, pygame.K_p)
    assert viewer.episode.path == episodes[1]
    press(viewer, pygame.K_UP)
    assert viewer.episode.path == episodes[0]
    viewer.draw()
    from demostudio.replay.listpanel import HEADER_HEIGHT, ROW_HEIGHT

    row = viewer.episode_list.rect.y + HEADER_HEIGHT + 2 * ROW_HEIGHT + 20  # the third row
    click(viewer, (viewer.episode_list.rect.x + 50, row))
    assert viewer.episode.path == episodes[2]


def test_speed_survives_episode_switch(viewer):
    press(viewer, pygame.K_RIGHTBRACKET)
    press(viewer, pygame.K_DOWN)
    assert viewer.playback.speed == 2.0


def test_bad_file_in_folder_shows_its_error_and_the_rest_work(viewer_factory, folder, episodes):
    bad = folder / "zz-broken.h5"
    bad.write_bytes(b"this is not an HDF5 file")
    v = viewer_factory([folder])
    assert len(v.catalog) == 4
    entry = v.catalog.entries[3]
    assert entry.path == bad and not entry.ok and "HDF5" in entry.error
    press(v, pygame.K_END)
    press(v, pygame.K_PAGEDOWN, times=3)
    assert v.catalog.index == 3 and v.episode is None and v.playback is None
    press(v, pygame.K_RIGHT)  # keys that need an episode do nothing harmful
    press(v, pygame.K_g)
    v.draw()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    pygame.image.save(v.screen, str(SCREENSHOTS / "bad_file.png"))
    press(v, pygame.K_UP)
    assert v.episode.path == episodes[2]


def test_file_with_broken_datasets_is_flagged_when_opened(viewer_factory, episodes):
    import h5py

    with h5py.File(episodes[1], "r+") as f:
        del f["rewards"]
    v = first_episode(viewer_factory(episodes))
    press(v, pygame.K_DOWN)
    assert v.episode is None
    assert "rewards" in v.catalog.entries[1].error
    press(v, pygame.K_DOWN)
    assert v.episode.path == episodes[2]


def test_tag_keys_save_tags_shown_by_ls(viewer, episodes, capsys):
    press(viewer, pygame.K_RIGHT, times=7)
    press(viewer, pygame.K_g)
    assert read_summary(episodes[0]).tags == ("good",)
    assert viewer.playback.frame == 7  # re-opening after the write keeps the position
    press(viewer, pygame.K_b)  # bad replaces good
    assert read_summary(episodes[0]).tags == ("bad",)
    press(viewer, pygame.K_t)
    assert viewer.state.dialog is not None
    press(viewer, pygame.K_BACKSPACE, times=3)
    type_text(viewer, "crash, slow")
    press(viewer, pygame.K_RETURN)
    assert viewer.state.dialog is None
    assert read_summary(episodes[0]).tags == ("crash", "slow")
    press(viewer, pygame.K_m)
    type_text(viewer, "hits the wall at step 40")
    press(viewer, pygame.K_RETURN)
    assert read_summary(episodes[0]).notes == "hits the wall at step 40"
    press(viewer, pygame.K_t)
    type_text(viewer, "ignored")
    press(viewer, pygame.K_ESCAPE)  # cancel keeps the tags and does not quit
    assert viewer.state.running and read_summary(episodes[0]).tags == ("crash", "slow")
    assert main(["ls", str(episodes[0].parent)]) == 0
    assert "crash,slow" in capsys.readouterr().out


def test_delete_asks_first(viewer, folder, episodes):
    press(viewer, pygame.K_DELETE)
    assert viewer.state.dialog is not None
    press(viewer, pygame.K_n)
    assert episodes[0].exists() and len(viewer.catalog) == 3
    press(viewer, pygame.K_DELETE)
    viewer.draw()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    pygame.image.save(viewer.screen, str(SCREENSHOTS / "delete_confirm.png"))
    press(viewer, pygame.K_y)
    assert not episodes[0].exists()
    assert len(viewer.catalog) == 2
    assert viewer.episode.path == episodes[1]
    assert sorted(folder.glob("*.h5")) == episodes[1:]


def test_overlay_help_list_toggles_and_resize(viewer):
    assert viewer.state.show_overlay
    press(viewer, pygame.K_TAB)
    assert not viewer.state.show_overlay
    press(viewer, pygame.K_h)
    assert viewer.state.show_help
    viewer.draw()
    press(viewer, pygame.K_l)
    assert viewer.layout.list is None
    assert viewer.timeline.rect.x == 0
    pygame.event.post(pygame.event.Event(pygame.VIDEORESIZE, size=(800, 500), w=800, h=500))
    viewer.pump()
    viewer.draw()


def test_quit_keys(viewer):
    press(viewer, pygame.K_q)
    assert not viewer.state.running


def test_drawing_reads_a_view_returns_what_it_drew_and_writes_nothing_back(viewer, monkeypatch):
    import ast

    import demostudio.replay.drawing as drawing

    tree = ast.parse(Path(drawing.__file__).read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "viewer" not in imported  # no cycle drawing <-> viewer, TYPE_CHECKING included
    rendered: list[list[str]] = []
    render = drawing.render_overlay
    monkeypatch.setattr(
        drawing, "render_overlay", lambda lines: rendered.append(lines) or render(lines)
    )
    before = {k: id(v) for k, v in vars(viewer).items()}
    view = viewer.view()
    drawn = drawing.draw_viewer(view)
    assert {k: id(v) for k, v in vars(viewer).items()} == before
    assert viewer.layout.frame.contains(drawn.picture)
    assert drawn.overlay is not None and viewer.layout.frame.contains(drawn.overlay)
    assert drawing.draw_viewer(view) == drawn and len(rendered) == 1  # the panel is cached
    press(viewer, pygame.K_RIGHT)
    viewer.draw()
    assert len(rendered) == 2 and rendered[-1][0].startswith("frame 1 / ")
    press(viewer, pygame.K_TAB)  # overlay off
    viewer.draw()
    assert viewer.drawn.overlay is None and viewer.drawn.picture == drawn.picture


def test_overlay_describes_the_frame(viewer, episodes):
    from demostudio.replay.overlay import describe_frame

    lines = describe_frame(viewer.episode, 0)
    assert lines[0].startswith("frame 0 / ")
    assert lines[1].startswith("time 0:00.00 / ") and "reset" in lines[2]
    press(viewer, pygame.K_RIGHT, times=3)
    lines = describe_frame(viewer.episode, 3)
    text = "\n".join(lines)
    action = int(viewer.episode.action(2))
    assert "step 2\n" in text and f"action {action}" in text
    assert "reward -1\n" in text and "return -3\n" in text
    assert "policy:" in text and "player tester" in text
    press(viewer, pygame.K_END)
    assert "TERMINATED" in "\n".join(describe_frame(viewer.episode, viewer.playback.frame))


def test_screenshot_shows_the_episode(viewer):
    press(viewer, pygame.K_RIGHT, times=40)
    press(viewer, pygame.K_i)
    press(viewer, pygame.K_RIGHT, pygame.KMOD_LSHIFT, times=3)
    press(viewer, pygame.K_o)
    viewer.draw()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / "mountaincar.png"
    pygame.image.save(viewer.screen, str(path))
    area = viewer.layout.frame
    # MountainCar is drawn on white: the middle of the frame area is mostly white.
    assert viewer.screen.get_at(area.center)[:3] == (255, 255, 255)
    # The marked range 40..70 is shaded on the timeline.
    assert viewer.playback.selection() == (40, 70)


def test_run_viewer_returns_on_window_close(folder, monkeypatch):
    """The entry point the launcher calls: runs the loop until the window is closed."""
    from demostudio.replay import run_viewer
    from demostudio.replay import viewer as viewer_module

    real_pump = viewer_module.Viewer.pump
    seen = []

    def pump(self):
        seen.append(self.playback.frame)
        if len(seen) == 1:
            pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.K_RIGHT, mod=0))
        elif len(seen) == 3:
            pygame.event.post(pygame.event.Event(pygame.QUIT))
        real_pump(self)

    monkeypatch.setattr(viewer_module.Viewer, "pump", pump)
    run_viewer([folder])
    assert seen[-1] == 1  # the posted Right arrow was handled by the real loop
    assert not pygame.display.get_init()  # it closed the display it opened


def test_replay_command_opens_the_viewer(folder, monkeypatch):
    calls = []
    monkeypatch.setattr("demostudio.replay.run_viewer", lambda paths: calls.append(paths))
    assert main(["replay", str(folder)]) == 0
    assert calls == [[folder]]


def test_episode_without_frames_shows_observations(viewer_factory, tmp_path):
    from demostudio.cli.record_cmd import RecordConfig, record
    from demostudio.episode import EpisodeError
    from demostudio.export import export_episode

    cfg = RecordConfig(env="CartPole-v1", episodes=1, out=tmp_path, seed=1, frames=False)
    (path,) = record(cfg, progress=False)
    v = viewer_factory([path])
    assert not v.episode.has_frames
    press(v, pygame.K_RIGHT, times=2)
    v.draw()
    press(v, pygame.K_x)
    assert not v.jobs and "without frames" in v.message[0]
    with pytest.raises(EpisodeError, match=r"\[frames\]"):
        export_episode(path, "mp4", tmp_path / "x.mp4")


def test_hovering_the_timeline_labels_the_frame_without_seeking(viewer):
    viewer.draw()
    t, y = viewer.timeline, _bar_y(viewer)
    pygame.event.post(
        pygame.event.Event(pygame.MOUSEMOTION, pos=(t.x_of(33), y), rel=(1, 0), buttons=(0, 0, 0))
    )
    viewer.pump()
    assert viewer.state.hover_x == t.x_of(33) and viewer.playback.frame == 0
    viewer.draw()
    pygame.event.post(
        pygame.event.Event(pygame.MOUSEMOTION, pos=(t.x_of(33), 5), rel=(0, -50), buttons=(0, 0, 0))
    )
    viewer.pump()
    assert viewer.state.hover_x is None


def test_empty_folder(viewer_factory, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    v = viewer_factory([empty])
    assert len(v.catalog) == 0 and v.episode is None
    for key in (pygame.K_SPACE, pygame.K_RIGHT, pygame.K_DOWN, pygame.K_v, pygame.K_DELETE):
        press(v, key)
    assert v.state.dialog is None
    v.draw()


def test_list_scrolls_to_the_selected_row(viewer_factory, folder, episodes):
    import shutil

    for n in range(12):
        shutil.copy2(episodes[0], folder / f"copy-{n:02d}.h5")
    v = viewer_factory([folder], size=(1000, 400))
    rows = v.episode_list.visible_rows
    assert rows < len(v.catalog)
    press(v, pygame.K_END)
    press(v, pygame.K_DOWN, times=len(v.catalog))
    assert v.catalog.index == len(v.catalog) - 1
    assert v.episode_list.scroll == len(v.catalog) - rows
    v.draw()


def test_a_failed_tag_write_is_reported_and_the_episode_stays_open(viewer, monkeypatch):
    from demostudio.replay import episode_actions

    def refuse(path, **_):
        raise OSError(13, "Permission denied")

    monkeypatch.setattr(episode_actions, "update_metadata", refuse)
    press(viewer, pygame.K_RIGHT, times=4)
    press(viewer, pygame.K_g)
    assert "could not save" in viewer.message[0] and "Permission denied" in viewer.message[0]
    assert viewer.episode is not None and viewer.playback.frame == 4


def _rescan_due(v) -> None:
    v._next_rescan = 0.0  # as if RESCAN_INTERVAL_S had passed
    v.update(0.0)


def test_files_added_or_removed_while_open_are_picked_up(viewer, folder, episodes):
    import shutil

    viewer.playback.seek(5)
    shutil.copy2(episodes[1], folder / "zz-new.h5")
    (folder / "recording.h5.partial").write_bytes(b"still being written")
    _rescan_due(viewer)
    paths = [e.path for e in viewer.catalog.entries]
    assert paths == [*episodes, folder / "zz-new.h5", folder / "recording.h5.partial"]
    assert viewer.catalog.entries[3].ok
    assert "still being recorded" in viewer.catalog.entries[4].error
    assert viewer.message[0] == "episodes: 2 new"
    # the episode being watched stays open where it was
    assert viewer.episode.path == episodes[0] and viewer.playback.frame == 5

    # the recording finishes (its .partial becomes an episode) and the open file is deleted
    (folder / "recording.h5.partial").unlink()
    shutil.copy2(episodes[2], folder / "recording.h5")
    episodes[0].unlink()
    _rescan_due(viewer)
    paths = [e.path for e in viewer.catalog.entries]
    assert paths == [episodes[1], episodes[2], folder / "recording.h5", folder / "zz-new.h5"]
    assert viewer.message[0] == "episodes: 1 new, 2 gone"
    assert viewer.episode.path == episodes[1] and viewer.catalog.index == 0
    viewer.draw()


def test_f5_rescans_now_and_retries_files_that_failed(viewer, folder, episodes):
    import shutil

    press(viewer, pygame.K_F5)
    assert viewer.message[0] == "no new episodes"
    late = folder / "zz-late.h5"
    late.write_bytes(b"half copied")
    press(viewer, pygame.K_F5)
    assert viewer.message[0] == "episodes: 1 new" and not viewer.catalog.entries[3].ok
    shutil.copy2(episodes[1], late)  # the copy completes
    _rescan_due(viewer)  # the periodic look does not re-read known files...
    assert not viewer.catalog.entries[3].ok
    press(viewer, pygame.K_F5)  # ...F5 does
    assert viewer.catalog.entries[3].ok
    press(viewer, pygame.K_END)
    press(viewer, pygame.K_PAGEDOWN, times=3)
    assert viewer.episode is not None and viewer.episode.path == late


def test_loop_key_loops_the_range_and_is_kept_across_episodes(viewer):
    press(viewer, pygame.K_l, mod=pygame.KMOD_SHIFT)
    assert viewer.playback.loop and viewer.state.show_list  # Shift+L is not L (list)
    viewer.playback.seek(viewer.playback.last - 1)
    press(viewer, pygame.K_SPACE)
    viewer.update(3 / viewer.playback.fps)  # three frames: last-1, last, 0, 1
    assert viewer.playback.playing and viewer.playback.frame == 1
    press(viewer, pygame.K_DOWN)
    assert viewer.playback.loop


def test_opens_within_a_small_desktop(viewer_factory, folder, monkeypatch):
    """A 1280x800 screen: the default 1280x800 window would hide the status bar and the
    timeline under the screen's edge; it opens fitted, with room for a title bar."""
    monkeypatch.setattr(pygame.display, "get_desktop_sizes", lambda: [(1280, 800)])
    v = viewer_factory([folder], size=(1280, 800))
    w, h = v.screen.get_size()
    assert w <= 1280 and h <= 0.9 * 800
    v.draw()
    assert v.layout.status.bottom == h and v.layout.timeline.bottom <= v.layout.status.top
    monkeypatch.setattr(pygame.display, "get_desktop_sizes", lambda: [(1366, 768)])
    v2 = viewer_factory([folder], size=(1280, 800))
    assert v2.screen.get_size()[1] <= 0.9 * 768


def test_the_overlay_lies_wholly_on_the_picture_or_beside_it():
    from demostudio.replay.drawing import _overlay_position

    overlay = pygame.Surface((230, 170))
    area = pygame.Rect(0, 0, 1100, 570)  # the list hidden: a 4:3 frame letterboxed
    picture = pygame.Rect(130, 0, 840, 560)
    x, y = _overlay_position(area, picture, overlay)
    assert picture.contains(pygame.Rect(x, y, 230, 170))
    wide = pygame.Rect(400, 0, 300, 560)  # room beside it (Atari): beside, not across
    x, y = _overlay_position(area, wide, overlay)
    assert x + 230 <= wide.x or x >= wide.right


def test_a_sample_is_never_tagged_from_the_window(viewer_factory, tmp_path, monkeypatch):
    """The tag keys on a bundled sample say so and write nothing."""
    from demostudio import assets

    monkeypatch.setattr(assets, "SAMPLE_DEMOS", tmp_path / "samples")
    sample = tmp_path / "samples" / "a.h5"
    sample.parent.mkdir()
    shipped = sorted((Path(__file__).resolve().parents[2] / "demos" / "CartPole-v1").glob("*.h5"))
    sample.write_bytes(shipped[0].read_bytes())
    before = sample.read_bytes()
    v = viewer_factory([sample])
    press(v, pygame.K_g)
    assert "a bundled sample is never written to" in v.message[0]
    assert sample.read_bytes() == before


def test_rewards_whose_sum_overflows_validate_and_replay(viewer_factory, episodes, monkeypatch):
    """Finite rewards near the float64 limit: their running sum overflows to inf, as the
    writer's total_return then does, so validate accepts the file. replay drew the return
    line through NaN and exited on ValueError; the line now runs along the plot's top."""
    from demostudio.replay import viewer as viewer_module
    from demostudio.replay.overlay import describe_frame

    path = episodes[0]
    with h5py.File(path, "r+") as f:
        f["rewards"][:] = 1e308
        f.attrs["total_return"] = json.dumps("inf")
    real_pump, pumps = viewer_module.Viewer.pump, []

    def pump(self):  # the real loop, drawing each frame: seek to the end, then close
        pumps.append(self.playback.frame)
        key = pygame.K_END if len(pumps) == 1 else None
        event = pygame.event.Event(pygame.KEYDOWN, key=key, mod=0) if key else None
        pygame.event.post(event or pygame.event.Event(pygame.QUIT))
        real_pump(self)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's overflow warnings are errors here
        assert main(["validate", str(path)]) == 0
        monkeypatch.setattr(viewer_module.Viewer, "pump", pump)
        assert main(["replay", str(path)]) == 0
        assert pumps[-1] == read_summary(path).length  # the End key was handled
        monkeypatch.setattr(viewer_module.Viewer, "pump", real_pump)
        v = viewer_factory([path])
        press(v, pygame.K_END)
        v.draw()
    assert "return inf" in describe_frame(v.episode, v.playback.frame)
    t = v.timeline
    column = t.x_of(v.playback.last) - 3
    top = [
        y
        for y in range(t.rect.y, t.rect.bottom)
        if v.screen.get_at((column, y))[:3] == theme.ACCENT
    ]
    assert top and min(top) <= t.rect.y + 5 and max(top) <= t.rect.y + 7

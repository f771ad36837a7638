"""The viewer and demo quality, with real pygame events: the timeline colours the person's
stretches, the list shows who acted and the quality flags, K / Shift+K trim the marked
range into a new episode that verifies."""

from __future__ import annotations

import shutil

import pygame

from demostudio.episode import read_summary, verify_episode
from demostudio.replay.listpanel import quality_line
from demostudio.replay.overlay import describe_frame
from demostudio.replay.timeline import BAR_HEIGHT, PERSON

from .conftest import SCREENSHOTS
from .helpers import add_takeovers, first_episode, press, wait_jobs


def _scanned(v):
    """Let the list's quality scan finish and the window take its results."""
    v.update(0.0)
    assert v.quality.wait(30)
    v.update(0.0)


def test_timeline_colours_the_persons_stretches(viewer_factory, episodes):
    add_takeovers(episodes[0], [(10, 30), (60, 80)])
    v = first_episode(viewer_factory(episodes))
    assert v.episode.mixed and v.episode.person[10:30].all() and not v.episode.person[30:60].any()
    v.draw()
    t = v.timeline
    bar_y = t.track.bottom - BAR_HEIGHT - 4 + 3  # inside the bar, clear of the playhead
    for step in (15, 25, 70):
        assert v.screen.get_at((t.x_of(step) + 1, bar_y))[:3] == PERSON
    for step in (5, 45, 100):
        assert v.screen.get_at((t.x_of(step) + 1, bar_y))[:3] != PERSON
    press(v, pygame.K_RIGHT, times=16)  # frame 16 follows step 15
    assert "acted: person" in describe_frame(v.episode, 16)
    assert "acted: agent" in describe_frame(v.episode, 41)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    v.draw()
    pygame.image.save(v.screen, str(SCREENSHOTS / "takeover_timeline.png"))


def test_list_shows_who_acted_and_the_quality_flags(viewer_factory, folder, episodes):
    add_takeovers(episodes[1], [(10, 30), (60, 80)])
    shutil.copy2(episodes[2], folder / "zz-copy.h5")
    v = viewer_factory([folder])
    _scanned(v)
    share = 40 / read_summary(episodes[1]).length
    assert quality_line(v.quality.get(episodes[1])) == f"person {share:.0%}, 2 takeovers"
    assert quality_line(v.quality.get(folder / "zz-copy.h5")) == "! duplicate"
    assert quality_line(v.quality.get(episodes[0])) == ""
    v.draw()  # the list draws the lines (and "1 flagged" in its title)
    # tagging rewrites the file: the scan reads it again and the flags stay
    press(v, pygame.K_UP, times=3)
    press(v, pygame.K_g)
    _scanned(v)
    assert quality_line(v.quality.get(episodes[1])).startswith("person ")


def test_trim_key_writes_the_marked_range_and_opens_it(viewer_factory, folder, episodes):
    v = first_episode(viewer_factory([folder]))
    press(v, pygame.K_RIGHT, times=10)
    press(v, pygame.K_i)
    press(v, pygame.K_RIGHT, pygame.KMOD_LSHIFT, times=3)
    press(v, pygame.K_o)
    press(v, pygame.K_k)
    assert v.jobs and v.jobs[0].label == "trim"
    wait_jobs(v)
    out = folder / (episodes[0].stem + "_trim10-40.h5")
    assert out.exists(), v.message
    assert v.episode.path == out and v.playback.n_frames == 31
    assert "wrote" in v.message[0]
    s = read_summary(out)
    assert s.attrs["trim"]["start"] == 10 and episodes[0].name in s.notes
    assert verify_episode(out).ok


def test_trim_idle_key_and_a_range_too_short(viewer_factory, episodes):
    v = first_episode(viewer_factory(episodes))
    press(v, pygame.K_i)
    press(v, pygame.K_o)  # in == out: no step to keep
    press(v, pygame.K_k)
    assert not v.jobs and "at least one step" in v.message[0]
    press(v, pygame.K_c)
    press(v, pygame.K_k, pygame.KMOD_LSHIFT)  # the whole episode, idle ends cut (none here)
    wait_jobs(v)
    n = read_summary(episodes[0]).length
    assert v.episode.path.name == f"{episodes[0].stem}_trim0-{n}.h5"

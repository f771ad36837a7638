"""Verification and export started from the viewer (background jobs)."""

from __future__ import annotations

import h5py
import imageio_ffmpeg
import pygame

from .helpers import first_episode, press, wait_jobs


def test_verify_from_viewer_matches(viewer_factory, episodes):
    v = first_episode(viewer_factory(episodes))
    press(v, pygame.K_v)
    assert v.jobs and v.jobs[0].label == "verify"
    v.draw()  # the window keeps drawing while the job runs
    wait_jobs(v)
    result = v.verify_results[episodes[0]]
    assert result.ok and result.steps_checked == v.playback.last
    assert v.divergence_frame() is None
    press(v, pygame.K_j)  # nothing to jump to: says so, stays put
    assert v.playback.frame == 0 and "no divergence" in v.message[0]


def test_verify_shows_divergence_and_jumps_there(viewer_factory, episodes):
    with h5py.File(episodes[1], "r+") as f:
        f["rewards"][10] = 5.0
    v = first_episode(viewer_factory(episodes))
    press(v, pygame.K_DOWN)
    press(v, pygame.K_v)
    while v.jobs and not v.jobs[0].finished:
        v.update(0.01)
        v.draw()
    wait_jobs(v)
    result = v.verify_results[episodes[1]]
    assert not result.ok
    assert result.divergence.step == 10 and result.divergence.field == "rewards"
    assert v.divergence_frame() == 11
    assert "diverges at step 10" in v.message[0]
    press(v, pygame.K_j)
    assert v.playback.frame == 11
    press(v, pygame.K_UP)
    assert v.divergence_frame() is None  # results are per episode
    press(v, pygame.K_DOWN)
    assert v.divergence_frame() == 11


def test_verify_results_stay_on_the_rows_and_in_the_overlay(viewer_factory, episodes, monkeypatch):
    """After the status message is gone the list still says which episodes verified and
    which diverged, and the overlay says it for the episode shown."""
    with h5py.File(episodes[1], "r+") as f:
        f["rewards"][10] = 5.0
    v = first_episode(viewer_factory(episodes))
    press(v, pygame.K_v)
    wait_jobs(v)
    press(v, pygame.K_DOWN)
    press(v, pygame.K_v)
    wait_jobs(v)
    v.message = ("", v.message[1], 0.0)  # the 6-second message is gone
    import demostudio.replay.drawing as drawing
    import demostudio.replay.listpanel as listpanel

    rows: list[str] = []
    overlay: list[list[str]] = []
    fit = listpanel._fit
    monkeypatch.setattr(listpanel, "_fit", lambda text, *a: rows.append(text) or fit(text, *a))
    render = drawing.render_overlay
    monkeypatch.setattr(
        drawing, "render_overlay", lambda lines: overlay.append(lines) or render(lines)
    )
    v.episode_list._cache = None
    v.draw()
    assert any(t.startswith("verified") for t in rows)
    assert any(t.startswith("DIVERGES at step 10") for t in rows)
    assert overlay[-1][-1] == "DIVERGES at step 10 in rewards (J jumps there)"


def test_export_marked_range_from_viewer(viewer_factory, episodes, tmp_path):
    v = first_episode(viewer_factory(episodes))
    press(v, pygame.K_RIGHT, times=5)
    press(v, pygame.K_i)
    press(v, pygame.K_RIGHT, pygame.KMOD_SHIFT, times=2)
    press(v, pygame.K_o)
    press(v, pygame.K_x)
    wait_jobs(v)
    out = tmp_path / "exports" / (episodes[0].name.removesuffix(".h5") + "_5-25.mp4")
    assert out.exists(), v.message
    assert imageio_ffmpeg.count_frames_and_secs(str(out))[0] == 21
    press(v, pygame.K_c)
    press(v, pygame.K_x, pygame.KMOD_SHIFT)
    wait_jobs(v)
    gif = tmp_path / "exports" / (episodes[0].name.removesuffix(".h5") + ".gif")
    from PIL import Image

    with Image.open(gif) as im:
        assert im.n_frames == v.playback.n_frames
    press(v, pygame.K_s)
    png = tmp_path / "exports" / (episodes[0].name.removesuffix(".h5") + "_frame000025.png")
    with Image.open(png) as im:
        assert im.size == (600, 400)


def test_tagging_waits_for_a_running_job(viewer_factory, episodes):
    v = first_episode(viewer_factory(episodes))
    press(v, pygame.K_v)
    press(v, pygame.K_g)
    if v.jobs and not v.jobs[0].finished:
        assert "wait" in v.message[0]
    wait_jobs(v)
    press(v, pygame.K_g)
    from demostudio.episode import read_summary

    assert "good" in read_summary(episodes[0]).tags


def test_verify_failure_is_reported_in_the_window(viewer_factory, episodes):
    from demostudio.episode import _h5

    with h5py.File(episodes[2], "r+") as f:
        _h5.write_attrs(f, {"env_id": "NoSuchGame-v0"})
    v = viewer_factory([episodes[2]])
    assert v.playback.fps == 30.0  # an unknown env still replays, at the default rate
    press(v, pygame.K_v)
    wait_jobs(v)
    assert "verify failed" in v.message[0] and "NoSuchGame-v0" in v.message[0]
    assert episodes[2] not in v.verify_results


def test_verify_shows_its_progress_on_the_timeline(viewer_factory, episodes, monkeypatch):
    """V: the timeline says the verifier is starting, then draws a strip that grows with the
    steps checked (and the status bar the same); nothing once the result is in."""
    from demostudio.replay.timeline import Timeline, checked_label

    seen = []
    draw = Timeline.draw

    def spy(self, *args, **kwargs):
        seen.append(kwargs.get("checked", args[6] if len(args) > 6 else None))
        return draw(self, *args, **kwargs)

    monkeypatch.setattr(Timeline, "draw", spy)
    v = first_episode(viewer_factory(episodes))
    press(v, pygame.K_v)
    v.draw()
    assert seen[-1] == (0, 0) and checked_label(0, 0) == "verify: starting the env..."
    while v.jobs and not v.jobs[0].finished:
        v.update(0.01)
        v.draw()
    total = v.playback.last
    progress = [c for c in seen if c is not None and c[1]]
    assert progress and all(c[1] == total for c in progress)
    assert [c[0] for c in progress] == sorted(c[0] for c in progress)  # only grows
    assert checked_label(3, total) == f"verifying: 3 / {total} steps"
    wait_jobs(v)
    v.update(0.01)
    v.draw()
    assert seen[-1] is None and v.verify_results[episodes[0]].ok


def test_help_explains_every_mark_of_the_timeline(viewer_factory, episodes, monkeypatch):
    """H: under the keys, a legend draws each timeline mark (the red ticks: negative
    rewards) with what it means, inside the window."""
    from demostudio.replay import drawing
    from demostudio.replay.timeline import LEGEND, PERSON
    from demostudio.ui import theme

    drawn = []
    monkeypatch.setattr(drawing, "draw_mark", lambda s, item, rect: drawn.append((item, rect)))
    v = first_episode(viewer_factory(episodes))
    press(v, pygame.K_h)
    v.draw()
    assert [item for item, _ in drawn] == list(LEGEND)
    screen = v.screen.get_rect()
    assert all(screen.contains(rect) for _, rect in drawn)
    said = {(item.mark, item.color): item.text for item in LEGEND}
    assert "negative reward" in said[("tick", theme.BAD)]
    assert "positive reward" in said[("tick", theme.GOOD)]
    assert "person" in said[("block", PERSON)] and ("checked", theme.ACCENT) in said
    assert {("end", theme.BAD), ("end", theme.WARN), ("divergence", theme.BAD)} <= set(said)

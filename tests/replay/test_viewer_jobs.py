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

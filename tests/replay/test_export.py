"""Export: exact frame counts and sizes for MP4, GIF and PNG; ranges, fps, scale; the CLI."""

from __future__ import annotations

import imageio_ffmpeg
import numpy as np
import pytest
from PIL import Image

from demostudio.cli import main
from demostudio.episode import EpisodeError, open_episode, read_summary
from demostudio.export import export_episode, resolve_range, scale_frame, stored_fps


def _mp4_info(path):
    reader = imageio_ffmpeg.read_frames(str(path))
    meta = next(reader)
    frames = [np.frombuffer(f, np.uint8) for f in reader]
    return meta, frames


def test_mp4_has_every_frame_at_the_stored_rate(episodes, tmp_path):
    path = episodes[0]
    n = read_summary(path).length + 1
    result = export_episode(path, "mp4", tmp_path / "all.mp4")
    meta, frames = _mp4_info(result.path)
    assert len(frames) == n
    assert tuple(meta["size"]) == (600, 400) == result.size
    assert meta["fps"] == pytest.approx(30.0) == result.fps  # MountainCar's render_fps


def test_mp4_range_fps_and_scale(episodes, tmp_path):
    result = export_episode(
        episodes[0], "mp4", tmp_path / "part.mp4", start=10, end=39, fps=12, scale=0.5
    )
    meta, frames = _mp4_info(result.path)
    assert len(frames) == 30 == result.frames.count
    assert tuple(meta["size"]) == (300, 200)
    assert meta["fps"] == pytest.approx(12.0)
    # The content is the episode's frame 10, downscaled (lossy codec: compare loosely).
    with open_episode(episodes[0]) as ep:
        want = scale_frame(ep.frame(10), (300, 200)).astype(int)
    got = frames[0].reshape(200, 300, 3).astype(int)
    assert np.mean(np.abs(got - want)) < 4


def test_mp4_odd_size_is_padded_to_even(episodes, tmp_path):
    result = export_episode(episodes[0], "mp4", tmp_path / "odd.mp4", end=4, scale=0.255)
    assert result.size == (154, 102)  # 153x102 padded by one column
    meta, frames = _mp4_info(result.path)
    assert tuple(meta["size"]) == (154, 102) and len(frames) == 5


def _gif_frames(path):
    with Image.open(path) as im:
        for i in range(im.n_frames):
            im.seek(i)
            yield np.asarray(im.convert("RGB"))


def test_gif_keeps_identical_frames_and_their_exact_colours(episodes, tmp_path):
    # The first frames of MountainCar barely move; a GIF writer that merges identical
    # frames would lose some. Ours writes exactly one GIF frame per episode frame, and with
    # at most 256 colours in the clip every pixel is the PNG export's of the same frame.
    result = export_episode(episodes[0], "gif", tmp_path / "a.gif", end=59, scale=0.25)
    pngs = export_episode(episodes[0], "png", tmp_path / "pngs", end=59, scale=0.25)
    gif = list(_gif_frames(result.path))
    assert len(gif) == 60 and gif[0].shape == (100, 150, 3)
    for i, frame in enumerate(gif):
        png = np.asarray(Image.open(pngs.path / f"frame_{i:06d}.png"))
        assert np.array_equal(frame, png), f"frame {i}: GIF colours differ from the PNG"


def test_gif_with_more_than_256_colours_stays_close(tmp_path):
    # A synthetic clip with 512 colours: palettegen picks 256, each pixel stays near.
    from demostudio.export import open_writer

    rng = np.random.default_rng(0)
    frames = [rng.integers(0, 256, (8, 64, 3), dtype=np.uint8) for _ in range(8)]
    writer = open_writer("gif", tmp_path / "many.gif", (64, 8), 10.0)
    for frame in frames:
        writer.write(frame)
    writer.close()
    gif = list(_gif_frames(tmp_path / "many.gif"))
    assert len(gif) == 8
    err = np.mean([np.abs(g.astype(int) - f.astype(int)).mean() for g, f in zip(gif, frames)])
    assert err < 15  # 11.3 here; the old yuv420p pipe and fixed palette: 21.3


def test_png_sequence_is_lossless_and_numbered_by_frame(episodes, tmp_path):
    result = export_episode(episodes[0], "png", tmp_path / "pngs", start=-3)
    names = sorted(p.name for p in result.path.iterdir())
    last = read_summary(episodes[0]).length
    assert names == [f"frame_{i:06d}.png" for i in range(last - 2, last + 1)]
    with open_episode(episodes[0]) as ep:
        for i in range(last - 2, last + 1):
            png = np.asarray(Image.open(result.path / f"frame_{i:06d}.png"))
            assert np.array_equal(png, ep.frame(i))


def test_bad_ranges_name_the_field(episodes):
    s = read_summary(episodes[0])
    with pytest.raises(EpisodeError, match=r"\[start\].*expected a frame index in 0\.\."):
        resolve_range(s, start=s.length + 1)
    with pytest.raises(EpisodeError, match=r"\[end\].*expected end >= start"):
        resolve_range(s, start=10, end=5)
    assert resolve_range(s, -1, None) == (s.length, s.length)


def test_scale_frame_nearest_neighbour():
    frame = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    big = scale_frame(frame, (6, 4))
    assert big.shape == (4, 6, 3)
    assert np.array_equal(big[::2, ::2], frame)


def test_stored_fps_falls_back_to_env_metadata(episodes):
    assert stored_fps(read_summary(episodes[0])) == 30.0


def test_export_command(episodes, tmp_path, capsys):
    out = tmp_path / "cli.gif"
    code = main(
        [
            "export",
            str(episodes[0]),
            "--format",
            "gif",
            "--start",
            "2",
            "--end",
            "11",
            "--scale",
            "0.5",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    assert code == 0
    assert "10 frames" in capsys.readouterr().out
    with Image.open(out) as im:
        assert im.n_frames == 10 and im.size == (300, 200)


def test_export_command_errors(episodes, tmp_path, capsys):
    assert main(["export", str(episodes[0]), "--end", "100000", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "[end]" in err and "expected a frame index" in err
    assert main(["export", str(episodes[0]), str(episodes[1])]) == 2
    assert "expected one episode file" in capsys.readouterr().err
    assert main(["export", str(tmp_path / "missing.h5")]) == 2
    assert "missing.h5" in capsys.readouterr().err
    assert main(["export", str(episodes[0]), "--scale", "0"]) == 2
    assert "--scale" in capsys.readouterr().err
    for huge in ("1e6", "50"):  # hours of frames of terabytes: refused before any is made
        out = tmp_path / f"huge{huge}.gif"
        argv = ["export", str(episodes[0]), "--scale", huge, "--out", str(out), "--no-progress"]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"--scale {float(huge):g}: expected frames at most 4096 pixels a side" in err
        assert err.count("\n") == 1 and not out.exists()
    assert main(["export", str(episodes[0].parent), "--format", "minari"]) == 2
    assert "--dataset-id" in capsys.readouterr().err


def test_replay_command_rejects_missing_paths_and_empty_folders(tmp_path, capsys):
    assert main(["replay", str(tmp_path / "nothing-here")]) == 2
    assert "nothing-here" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["replay", str(tmp_path / "empty")]) == 2
    assert "expected episode files (*.h5), found none" in capsys.readouterr().err
    assert main(["replay"]) == 2  # your recordings folder, before you recorded anything
    assert "recordings: expected episode files" in capsys.readouterr().err


def test_export_command_minari_calls_the_interop_exporter(episodes, tmp_path, capsys):
    out = tmp_path / "datasets"
    code = main(
        [
            "export",
            str(episodes[0].parent),
            "--format",
            "minari",
            "--dataset-id",
            "test/mountaincar-v0",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    assert code == 0
    assert "test/mountaincar-v0" in capsys.readouterr().out
    assert any(out.rglob("*.hdf5")) or any(out.rglob("*.h5"))


@pytest.mark.parametrize("fmt", ["mp4", "gif"])
def test_an_ffmpeg_failure_is_one_line_without_ffmpeg_output(episodes, tmp_path, capfd, fmt):
    """MP4 went through imageio's pipe, which let ffmpeg print to the terminal and ended in a
    BrokenPipe traceback; the GIF error carried all of ffmpeg's lines."""
    out = tmp_path / f"{'x' * 300}.{fmt}"  # ffmpeg cannot open it for writing
    argv = ["export", str(episodes[0]), "--format", fmt, "--end", "5", "--out", str(out)]
    assert main([*argv, "--no-progress"]) == 2
    captured = capfd.readouterr()  # at the descriptor level: ffmpeg's own writes too
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert captured.err.startswith(
        f"demostudio: error: {out}: ffmpeg failed writing the {fmt.upper()}: "
    )


def test_a_frame_rate_outside_the_schema_is_refused_on_both_sides(episodes, tmp_path, capsys):
    """fps -30 or NaN in the file was a traceback ("expected fps > 0, got None"), 0 became
    30 silently, 1e308 broke ffmpeg; --fps 1e308 was accepted."""
    import h5py

    bad = tmp_path / "fps.h5"
    bad.write_bytes(episodes[0].read_bytes())
    for raw in ("NaN", "-30", "0", "1e308"):
        with h5py.File(bad, "r+") as f:
            f.attrs["fps"] = raw
        png = ["--format", "png", "--out", str(tmp_path / "p"), "--no-progress"]
        assert main(["export", str(bad), *png]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"demostudio: error: {bad} [fps]: expected a number of steps")
    argv = ["export", str(episodes[0]), "--fps", "1e308", "--out", str(tmp_path / "x.mp4")]
    assert main(argv) == 2
    assert "--fps: expected a number from 0.01 to 10000" in capsys.readouterr().err
    assert not (tmp_path / "p").exists() and not (tmp_path / "x.mp4").exists()


@pytest.mark.timeout(60)
def test_export_never_overwrites_an_episode_nor_waits_on_a_fifo(episodes, tmp_path, capsys):
    """`export EP --format gif --out EP` replaced the episode with a GIF (exit 0), as did an
    --out naming another episode; a FIFO --out waited for a reader; a PNG --out naming a file
    was a FileExistsError traceback."""
    import hashlib
    import os
    import shutil

    ep = tmp_path / "ep.h5"
    shutil.copy(episodes[0], ep)
    other = tmp_path / "other.h5.bak"  # an episode whatever its name
    shutil.copy(episodes[0], other)
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in (ep, other)}
    fifo = tmp_path / "clip.gif"
    os.mkfifo(fifo)
    cases = [
        ("gif", ep, "expected a path for the gif file, got the episode being exported"),
        ("mp4", ep, "expected a path for the mp4 file, got the episode being exported"),
        (
            "gif",
            other,
            "got an HDF5 file (an episode?): it is never overwritten",
        ),
        ("png", ep, "expected a folder for the PNG frames, got a file"),
        ("gif", fifo, "got a special file (FIFO, device)"),
        ("mp4", tmp_path, "expected a path for the mp4 file, got a folder"),
    ]
    for fmt, out, expected in cases:
        argv = ["export", str(ep), "--format", fmt, "--out", str(out), "--end", "2"]
        assert main([*argv, "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"demostudio: error: {out}: --out: ") and expected in err
        assert err.count("\n") == 1
    assert {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in (ep, other)} == before
    # an earlier export is still replaced, as a video tool does
    clip = tmp_path / "clip2.gif"
    for _ in range(2):
        assert main(["export", str(ep), "--format", "gif", "--out", str(clip), "--end", "2"]) == 0


@pytest.mark.parametrize("fmt", ["mp4", "gif"])
def test_an_interrupted_export_leaves_the_earlier_one(episodes, tmp_path, fmt):
    """Ctrl-C during an MP4 export replaced an earlier export with an 8 KB truncated video
    and said "ffmpeg failed writing the MP4: no message" (exit 2): ffmpeg, in the terminal's
    process group, died of the same Ctrl-C. A video is now written beside its target and
    renamed once complete; ffmpeg runs in its own session."""
    out = tmp_path / "exports"
    out.mkdir()
    target = out / f"clip.{fmt}"
    target.write_bytes(b"an earlier export")

    def interrupt(done: int, total: int) -> None:
        if done == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        export_episode(episodes[0], fmt, target, end=10, progress=interrupt)
    assert target.read_bytes() == b"an earlier export"
    assert sorted(p.name for p in out.iterdir()) == [target.name]
    export_episode(episodes[0], fmt, target, end=3)  # a complete one replaces it
    assert target.stat().st_size > 1000
    assert sorted(p.name for p in out.iterdir()) == [target.name]

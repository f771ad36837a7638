"""Frame sinks: H.264 MP4 and GIF through imageio-ffmpeg, PNG sequences through Pillow.

Every writer takes frames one at a time (an episode is never held whole in memory) and
writes exactly the frames it is given. GIF goes through ffmpeg's palette filters rather
than Pillow, whose GIF writer merges identical consecutive frames: the frames are spooled
to a temporary raw file, ``palettegen`` builds one palette from all of them (every colour
kept exactly when the clip has at most 256) and ``paletteuse`` maps the frames onto it.
(Through imageio-ffmpeg's pipe the frames would be converted to yuv420p first, and the GIF
would come out in ffmpeg's fixed fallback palette.)"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path
from typing import Protocol

import numpy as np

from .framing import pad_even

FORMATS = ("mp4", "gif", "png")
GIF_COLORS = 256


class FrameWriter(Protocol):
    path: Path

    def write(self, frame: np.ndarray) -> None: ...

    def close(self) -> None: ...


def _ffmpeg():
    try:
        import imageio_ffmpeg
    except ImportError:
        raise RuntimeError(
            "expected the imageio-ffmpeg package for mp4/gif export, it is not installed "
            "(pip install 'demostudio[video]')"
        ) from None
    return imageio_ffmpeg


class Mp4Writer:
    """H.264 MP4, yuv420p, constant frame rate (odd sizes padded by one pixel to even)."""

    def __init__(self, path: Path, size: tuple[int, int], fps: float):
        self.path = path
        width, height = size
        self.size = (width + width % 2, height + height % 2)
        self._gen = _ffmpeg().write_frames(
            str(path),
            self.size,
            fps=fps,
            pix_fmt_in="rgb24",
            pix_fmt_out="yuv420p",
            codec="libx264",
            quality=None,
            macro_block_size=1,
            ffmpeg_log_level="error",
            output_params=["-crf", "18", "-preset", "veryfast", "-fps_mode", "cfr"],
        )
        self._gen.send(None)

    def write(self, frame: np.ndarray) -> None:
        self._gen.send(_checked(pad_even(frame), self.size))

    def close(self) -> None:
        self._gen.close()


class GifWriter:
    """An animated GIF with one palette for the whole clip, built from every frame's colours
    (exact when the clip has at most 256 colours), one GIF frame per episode frame."""

    def __init__(self, path: Path, size: tuple[int, int], fps: float):
        self.path = path
        self.size = size
        self.fps = fps
        self._exe = _ffmpeg().get_ffmpeg_exe()
        self._tmp = tempfile.TemporaryDirectory(prefix="demostudio-gif-")
        self._raw_path = Path(self._tmp.name) / "frames.rgb"
        self._raw = open(self._raw_path, "wb")  # noqa: SIM115 (closed in close())
        self.frames = 0
        self._colors: set[int] | None = set()
        """Every colour written so far (packed 0xRRGGBB), None once there are too many."""

    def write(self, frame: np.ndarray) -> None:
        frame = _checked(frame, self.size)
        self._raw.write(frame.tobytes())
        self.frames += 1
        if self._colors is not None:
            self._colors.update(np.unique(_packed(frame)).tolist())
            if len(self._colors) > GIF_COLORS:
                self._colors = None  # too many for an exact palette: palettegen picks 256

    def _palette(self) -> Path:
        """A 16x16 PNG of the palette: the clip's exact colours, or palettegen's choice."""
        palette = Path(self._tmp.name) / "palette.png"
        if self._colors is None:
            self._run("-vf", "palettegen=stats_mode=full:reserve_transparent=0", str(palette))
            return palette
        colors = sorted(self._colors)
        colors += colors[-1:] * (GIF_COLORS - len(colors))
        rgb = np.array([(c >> 16, (c >> 8) & 255, c & 255) for c in colors], dtype=np.uint8)
        save_png(rgb.reshape(16, 16, 3), palette)
        return palette

    def _run(self, *args: str) -> None:
        width, height = self.size
        raw_input = ["-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{width}x{height}"]
        cmd = [self._exe, "-hide_banner", "-loglevel", "error", "-y", "-r", f"{self.fps:g}"]
        done = subprocess.run(
            [*cmd, *raw_input, "-i", str(self._raw_path), *args], capture_output=True, text=True
        )
        if done.returncode != 0:
            raise RuntimeError(f"{self.path}: ffmpeg failed writing the GIF: {done.stderr.strip()}")

    def close(self) -> None:
        try:
            self._raw.close()
            if self.frames:
                self._run(
                    "-i",
                    str(self._palette()),
                    "-lavfi",
                    "[0:v][1:v]paletteuse=dither=none",
                    "-loop",
                    "0",
                    "-f",
                    "gif",
                    str(self.path),
                )
        finally:
            self._tmp.cleanup()


def _packed(frame: np.ndarray) -> np.ndarray:
    """[H, W, 3] uint8 -> [H * W] uint32 0xRRGGBB."""
    rgb = frame.reshape(-1, 3).astype(np.uint32)
    return rgb[:, 0] << 16 | rgb[:, 1] << 8 | rgb[:, 2]


def _checked(frame: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    height, width = frame.shape[:2]
    if (width, height) != size:
        raise ValueError(f"expected a {size[0]}x{size[1]} frame, got {width}x{height}")
    return np.ascontiguousarray(frame, dtype=np.uint8)


def save_png(frame: np.ndarray, path: Path) -> None:
    """One frame as a lossless PNG (fast compression: frames are small, exports are many)."""
    from PIL import Image

    Image.fromarray(np.ascontiguousarray(frame, dtype=np.uint8)).save(path, compress_level=1)


class PngSequenceWriter:
    """``frame_000000.png``, ``frame_000001.png``, ... in a folder (numbered by episode frame)."""

    def __init__(self, path: Path, first_index: int = 0):
        self.path = path
        self.path.mkdir(parents=True, exist_ok=True)
        self.index = first_index

    def write(self, frame: np.ndarray) -> None:
        save_png(frame, self.path / f"frame_{self.index:06d}.png")
        self.index += 1

    def close(self) -> None:
        pass


def open_writer(
    fmt: str, path: Path, size: tuple[int, int], fps: float, first_index: int = 0
) -> FrameWriter:
    if fmt == "png":
        return PngSequenceWriter(path, first_index)
    if fmt == "mp4":
        return Mp4Writer(path, size, fps)
    if fmt == "gif":
        return GifWriter(path, size, fps)
    raise ValueError(f"expected an export format in {FORMATS}, got {fmt!r}")

"""Frame sinks: H.264 MP4 and GIF through imageio-ffmpeg, PNG sequences through Pillow.

Every writer takes frames one at a time (an episode is never held whole in memory) and
writes exactly the frames it is given: GIF goes through ffmpeg's palette filters rather
than Pillow, whose GIF writer merges identical consecutive frames."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import numpy as np

from .framing import pad_even

FORMATS = ("mp4", "gif", "png")


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


class FfmpegWriter:
    """MP4 (H.264, yuv420p, constant frame rate) or GIF (one palette for the whole clip)."""

    def __init__(self, path: Path, fmt: str, size: tuple[int, int], fps: float):
        if fmt not in ("mp4", "gif"):
            raise ValueError(f"expected format mp4 or gif, got {fmt!r}")
        self.path = path
        self.fmt = fmt
        width, height = size
        if fmt == "mp4":
            width, height = width + width % 2, height + height % 2
            kwargs = {
                "codec": "libx264",
                "pix_fmt_out": "yuv420p",
                "quality": None,
                "output_params": ["-crf", "18", "-preset", "veryfast", "-fps_mode", "cfr"],
            }
        else:
            kwargs = {
                "codec": "gif",
                "pix_fmt_out": None,
                "output_params": [
                    "-filter_complex",
                    "split[a][b];[a]palettegen=stats_mode=full[p];[b][p]paletteuse=dither=none",
                    "-loop",
                    "0",
                ],
            }
        self.size = (width, height)
        self._gen = _ffmpeg().write_frames(
            str(path),
            self.size,
            fps=fps,
            pix_fmt_in="rgb24",
            macro_block_size=1,
            ffmpeg_log_level="error",
            **kwargs,
        )
        self._gen.send(None)

    def write(self, frame: np.ndarray) -> None:
        if self.fmt == "mp4":
            frame = pad_even(frame)
        height, width = frame.shape[:2]
        if (width, height) != self.size:
            raise ValueError(
                f"expected a {self.size[0]}x{self.size[1]} frame, got {width}x{height}"
            )
        self._gen.send(np.ascontiguousarray(frame, dtype=np.uint8))

    def close(self) -> None:
        self._gen.close()


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
    if fmt in ("mp4", "gif"):
        return FfmpegWriter(path, fmt, size, fps)
    raise ValueError(f"expected an export format in {FORMATS}, got {fmt!r}")

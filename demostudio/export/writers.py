"""Frame sinks: H.264 MP4 and GIF through imageio-ffmpeg, PNG sequences through Pillow.

Every writer takes frames one at a time (an episode is never held whole in memory) and
writes exactly the frames it is given. GIF goes through ffmpeg's palette filters rather
than Pillow, whose GIF writer merges identical consecutive frames: the frames are spooled
to a temporary raw file, ``palettegen`` builds one palette from all of them (every colour
kept exactly when the clip has at most 256) and ``paletteuse`` maps the frames onto it.
(Through imageio-ffmpeg's pipe the frames would be converted to yuv420p first, and the GIF
would come out in ffmpeg's fixed fallback palette.)

ffmpeg's own output never reaches the terminal: its stderr goes to a temporary file, and a
failure (ffmpeg exits non-zero, or stops reading frames) is one RuntimeError line naming the
output and ffmpeg's first error line. Nothing is left half-written under its final name: the
caller renames a video once it is complete, and each PNG is written beside its name and
renamed (a full disk leaves the frames before it whole, and none after)."""

from __future__ import annotations

import os
import subprocess
import tempfile
from fractions import Fraction
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


def _rate(fps: float) -> str:
    """A frame rate as ffmpeg reads it: a rational, so 24000/1001 is not rounded."""
    return str(Fraction(fps).limit_denominator())


def _failure(path: Path, what: str, stderr: str) -> RuntimeError:
    """ffmpeg failed writing ``path``: one line with ffmpeg's first error line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    first = next((line for line in lines if "rror" in line or "nvalid" in line), None)
    detail = (first or (lines[0] if lines else "no message"))[:200]
    return RuntimeError(f"{path}: ffmpeg failed writing the {what}: {detail}")


class Mp4Writer:
    """H.264 MP4, yuv420p, constant frame rate (odd sizes padded by one pixel to even)."""

    def __init__(self, path: Path, size: tuple[int, int], fps: float, partial: Path | None = None):
        self.path = path
        self._out = partial or path  # written there, named ``path`` in messages
        width, height = size
        self.size = (width + width % 2, height + height % 2)
        raw_input = ["-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{self.size[0]}x{self.size[1]}"]
        cmd = [_ffmpeg().get_ffmpeg_exe(), "-hide_banner", "-loglevel", "error", "-y"]
        cmd += [*raw_input, "-r", _rate(fps), "-i", "-", "-an"]
        cmd += ["-vcodec", "libx264", "-pix_fmt", "yuv420p", "-crf", "18", "-preset", "veryfast"]
        cmd += ["-fps_mode", "cfr", "-f", "mp4", str(self._out)]
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed in close())
        self._proc = subprocess.Popen(  # its own session: Ctrl-C interrupts us, not ffmpeg
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=self._stderr,
            start_new_session=True,
        )

    def write(self, frame: np.ndarray) -> None:
        try:
            self._proc.stdin.write(_checked(pad_even(frame), self.size).tobytes())
        except BrokenPipeError:  # ffmpeg stopped: its error says why
            raise self._finish() or _failure(self.path, "MP4", "") from None

    def _finish(self) -> RuntimeError | None:
        """Wait for ffmpeg; its failure as one line, or None."""
        try:
            self._proc.stdin.close()
        except BrokenPipeError:
            pass
        code = self._proc.wait()
        self._stderr.seek(0)
        stderr = self._stderr.read().decode("utf-8", "replace")
        self._stderr.close()
        return _failure(self.path, "MP4", stderr) if code != 0 else None

    def close(self) -> None:
        if self._proc.returncode is not None:
            return  # already finished (a failed write)
        error = self._finish()
        if error is not None:
            raise error


class GifWriter:
    """An animated GIF with one palette for the whole clip, built from every frame's colours
    (exact when the clip has at most 256 colours), one GIF frame per episode frame."""

    def __init__(self, path: Path, size: tuple[int, int], fps: float, partial: Path | None = None):
        self.path = path
        self._out = partial or path  # written there, named ``path`` in messages
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
        try:
            self._raw.write(frame.tobytes())
        except OSError as exc:
            raise self._spool_failure(exc) from None
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
        cmd = [self._exe, "-hide_banner", "-loglevel", "error", "-y", "-r", _rate(self.fps)]
        done = subprocess.run(
            [*cmd, *raw_input, "-i", str(self._raw_path), *args],
            capture_output=True,
            text=True,
            errors="replace",
            start_new_session=True,  # Ctrl-C interrupts us, not ffmpeg
        )
        if done.returncode != 0:
            raise _failure(self.path, "GIF", done.stderr)

    def _spool_failure(self, exc: OSError) -> RuntimeError:
        """The frames could not be spooled to the temporary folder (a full disk)."""
        why = os.strerror(exc.errno) if exc.errno else str(exc)
        return RuntimeError(
            f"{self.path}: cannot spool the GIF's frames to {self._raw_path} ({why})"
        )

    def close(self) -> None:
        try:
            try:
                self._raw.close()
            except OSError as exc:
                raise self._spool_failure(exc) from None
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
                    str(self._out),
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
    """One frame as a lossless PNG (fast compression: frames are small, exports are many),
    written beside ``path`` and renamed once whole: a failure (a full disk) leaves what was
    at ``path`` as it was and raises the disk's error naming ``path``."""
    from PIL import Image

    path = Path(path)
    tmp = path.with_name(path.name + ".partial")
    image = Image.fromarray(np.ascontiguousarray(frame, dtype=np.uint8))
    try:
        image.save(tmp, format="PNG", compress_level=1)
        os.replace(tmp, path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.errno:
            raise OSError(exc.errno, os.strerror(exc.errno), str(path)) from None
        raise


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
    fmt: str,
    path: Path,
    size: tuple[int, int],
    fps: float,
    first_index: int = 0,
    partial: Path | None = None,
) -> FrameWriter:
    """A writer of ``path`` (MP4 and GIF: written to ``partial`` when given, for the caller to
    rename once it is complete)."""
    if fmt == "png":
        return PngSequenceWriter(path, first_index)
    if fmt == "mp4":
        return Mp4Writer(path, size, fps, partial)
    if fmt == "gif":
        return GifWriter(path, size, fps, partial)
    raise ValueError(f"expected an export format in {FORMATS}, got {fmt!r}")

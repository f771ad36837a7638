"""Export episodes' frames: MP4 and GIF (imageio-ffmpeg), PNG sequences (Pillow)."""

from .episode import ExportResult, default_output, export_episode
from .framing import DEFAULT_FPS, FrameRange, resolve_range, scale_frame, scaled_size, stored_fps
from .writers import FORMATS, GifWriter, Mp4Writer, PngSequenceWriter, open_writer, save_png

__all__ = [
    "DEFAULT_FPS",
    "FORMATS",
    "ExportResult",
    "FrameRange",
    "GifWriter",
    "Mp4Writer",
    "PngSequenceWriter",
    "default_output",
    "export_episode",
    "open_writer",
    "resolve_range",
    "save_png",
    "scale_frame",
    "scaled_size",
    "stored_fps",
]

"""The playback clock of one episode: position, play/pause, speed, direction and in/out
marks. Pure state with no pygame, so tests drive it directly.

Positions are frame indices 0..T (frame 0 is the reset, frame t+1 follows step t). The
clock is time-based: ``tick(dt)`` advances ``dt * fps * speed`` frames, so at 8x the viewer
skips frames instead of slowing down."""

from __future__ import annotations

from dataclasses import dataclass

SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
NORMAL_SPEED = SPEEDS.index(1.0)
_JUST_BELOW_ONE = 1.0 - 1e-9


@dataclass
class Playback:
    n_frames: int
    """T + 1."""
    fps: float
    """Frames per second at 1x."""
    position: float = 0.0
    """Fractional frame position; the frame shown is its integer part."""
    playing: bool = False
    speed_index: int = NORMAL_SPEED
    reverse: bool = False
    mark_in: int | None = None
    mark_out: int | None = None
    loop: bool = False
    """Playing past either end of the marked range (or the episode) wraps to its other end."""

    def __post_init__(self) -> None:
        if self.n_frames < 1:
            raise ValueError(f"expected at least one frame, got {self.n_frames}")
        if not self.fps > 0:
            raise ValueError(f"expected fps > 0, got {self.fps}")

    # ---- reading ---------------------------------------------------------------------------

    @property
    def last(self) -> int:
        return self.n_frames - 1

    @property
    def frame(self) -> int:
        return min(max(int(self.position), 0), self.last)

    @property
    def speed(self) -> float:
        return SPEEDS[self.speed_index]

    @property
    def seconds(self) -> float:
        return self.frame / self.fps

    def selection(self) -> tuple[int, int]:
        """The marked range (inclusive), or the whole episode."""
        start = 0 if self.mark_in is None else self.mark_in
        end = self.last if self.mark_out is None else self.mark_out
        return start, end

    # ---- moving ----------------------------------------------------------------------------

    def seek(self, frame: int) -> None:
        frame = min(max(int(frame), 0), self.last)
        # In reverse a frame is shown while the position falls from frame + 1 to frame, so
        # every frame stays up for 1 / (fps * speed) whichever way the clock runs.
        self.position = frame + (_JUST_BELOW_ONE if self.reverse else 0.0)

    def step(self, delta: int) -> None:
        """Move ``delta`` frames and pause (as video players do when stepping)."""
        self.playing = False
        self.seek(self.frame + delta)

    def home(self) -> None:
        self.seek(0)

    def end(self) -> None:
        self.seek(self.last)

    def toggle_play(self) -> None:
        if not self.playing and not self.loop:
            # Playing from the end it is heading to starts over from the other end.
            if not self.reverse and self.frame >= self.last:
                self.seek(0)
            elif self.reverse and self.frame <= 0:
                self.seek(self.last)
        self.playing = not self.playing

    def faster(self) -> None:
        self.speed_index = min(self.speed_index + 1, len(SPEEDS) - 1)

    def slower(self) -> None:
        self.speed_index = max(self.speed_index - 1, 0)

    def set_speed(self, speed: float) -> None:
        if speed not in SPEEDS:
            raise ValueError(f"expected a speed in {SPEEDS}, got {speed}")
        self.speed_index = SPEEDS.index(speed)

    def toggle_reverse(self) -> None:
        self.reverse = not self.reverse
        self.seek(self.frame)

    def set_in(self) -> None:
        """Mark the range's start here; after the out mark, the two swap (the range is
        the frames between them either way)."""
        self.mark_in = self.frame
        if self.mark_out is not None and self.mark_out < self.mark_in:
            self.mark_in, self.mark_out = self.mark_out, self.mark_in

    def set_out(self) -> None:
        """Mark the range's end here; before the in mark, the two swap."""
        self.mark_out = self.frame
        if self.mark_in is not None and self.mark_in > self.mark_out:
            self.mark_in, self.mark_out = self.mark_out, self.mark_in

    def clear_marks(self) -> None:
        self.mark_in = self.mark_out = None

    def toggle_loop(self) -> None:
        self.loop = not self.loop

    def tick(self, dt: float) -> int:
        """Advance the clock by ``dt`` seconds; returns how many frames the shown frame moved
        (0 when paused). Stops at either end, or wraps within the range when looping."""
        if not self.playing or dt <= 0:
            return 0
        before = self.frame
        step = dt * self.fps * self.speed
        if self.loop:
            self._tick_loop(step)
        elif self.reverse:
            self.position -= step
            if self.position < 0:
                self.position, self.playing = 0.0, False
        else:
            self.position += step
            if self.position >= self.last:
                self.position, self.playing = float(self.last), False
        return abs(self.frame - before)

    def _tick_loop(self, step: float) -> None:
        # Each frame of [start, end] is shown while the position is in [f, f + 1), so the
        # range spans positions [start, end + 1) and its last frame gets its full time too.
        # A position outside the range plays on into it (as an A-B loop does).
        start, end = self.selection()
        span = end + 1 - start
        if self.reverse:
            was_inside = self.position >= start
            self.position -= step
            if was_inside and self.position < start:
                self.position = end + 1 - (start - self.position) % span
                if self.position >= end + 1:
                    self.position = end + _JUST_BELOW_ONE
        else:
            was_inside = self.position < end + 1
            self.position += step
            if was_inside and self.position >= end + 1:
                self.position = start + (self.position - end - 1) % span

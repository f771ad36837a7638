"""The timeline bar: click or drag to seek; reward and end markers, the return over time,
the stretches a person played, the in/out range, the verification divergence and progress,
and the playhead. :data:`LEGEND` says what each mark means (the help screen shows it).

Layout of the widget's rect (top to bottom)::

    |  return plot (line from min to max return)              # person |
    |  ' '  '   '' reward ticks (green > 0, red < 0)                   | end marker
    |=====#####=[ in ........ out ]====|playhead|====#####=============|
    |~~~~~~~~~~~~~~ steps verified so far (while V runs)               |
                ##### the person's stretches (take-overs), in PERSON
"""

from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np
import pygame

from demostudio.ui import theme

from .loaded import LoadedEpisode

PERSON = (190, 110, 250)
"""The colour of the steps a person took."""
BAR_HEIGHT = 16
TICK_HEIGHT = 10
PAD = 8
CHECKED_HEIGHT = 4
"""The strip along the bar's bottom edge that grows as verification checks the steps."""


class LegendItem(NamedTuple):
    mark: Literal["line", "tick", "block", "range", "end", "divergence", "checked"]
    color: tuple[int, int, int]
    text: str


LEGEND: tuple[LegendItem, ...] = (
    LegendItem("line", theme.ACCENT, "the return so far, from its lowest to its highest"),
    LegendItem("tick", theme.GOOD, "a step with a positive reward"),
    LegendItem("tick", theme.BAD, "a step with a negative reward (MountainCar: every step)"),
    LegendItem("block", PERSON, "steps a person played (taking over from an agent)"),
    LegendItem("range", theme.WARN, "the marked range (I and O)"),
    LegendItem("end", theme.BAD, "the end: terminated (the env ended it)"),
    LegendItem("end", theme.WARN, "the end: truncated (time limit, or End in the game)"),
    LegendItem("divergence", theme.BAD, "where verification diverged (J jumps there)"),
    LegendItem("checked", theme.ACCENT, "steps verified so far, while V runs"),
)
"""What the timeline's marks mean, drawn as the timeline draws them (:func:`draw_mark`)."""


def draw_mark(surface: pygame.Surface, item: LegendItem, rect: pygame.Rect) -> None:
    """``item``'s mark in ``rect`` (a swatch for the legend), as the timeline draws it."""
    mid = rect.centery
    if item.mark == "line":
        points = [(rect.left, rect.bottom - 2), (rect.centerx, mid), (rect.right, rect.top + 2)]
        pygame.draw.lines(surface, item.color, False, points, 2)
    elif item.mark == "tick":
        for x in range(rect.left + 2, rect.right, 5):
            pygame.draw.line(surface, item.color, (x, rect.top + 2), (x, rect.bottom - 2), 1)
    elif item.mark in ("block", "range"):
        bar = pygame.Rect(rect.left, mid - 5, rect.width, 10)
        pygame.draw.rect(surface, theme.PANEL_LIGHT, bar)
        pygame.draw.rect(surface, item.color, bar.inflate(-rect.width // 2, 0))
    elif item.mark == "end":
        pygame.draw.line(
            surface, item.color, (rect.centerx, rect.top), (rect.centerx, rect.bottom), 3
        )
    elif item.mark == "divergence":
        x = rect.centerx
        pygame.draw.line(surface, item.color, (x, rect.top), (x, rect.bottom - 4), 2)
        pygame.draw.polygon(surface, item.color, [(x - 5, rect.bottom), (x + 5, rect.bottom),
                                                  (x, rect.bottom - 7)])  # fmt: skip
    else:  # checked
        bar = pygame.Rect(rect.left, mid - 5, rect.width, 10)
        pygame.draw.rect(surface, theme.PANEL_LIGHT, bar)
        done = pygame.Rect(
            bar.left, bar.bottom - CHECKED_HEIGHT, bar.width * 2 // 3, CHECKED_HEIGHT
        )
        pygame.draw.rect(surface, item.color, done)


def checked_label(done: int, total: int) -> str:
    """What the timeline says while verification runs (``total`` 0: the verifier is still
    making the env, before its first step)."""
    if total <= 0:
        return "verify: starting the env..."
    return f"verifying: {done} / {total} steps"


def plot_heights(values: np.ndarray) -> np.ndarray:
    """[N] where each return goes in the plot, from 0 (the lowest) to 1 (the highest).

    Scaled between the finite extremes, each halved first so that their difference cannot
    overflow; a return past them (inf once finite rewards overflow float64, as the file's
    total_return then is) sits on the edge it went past, so the line never leaves the plot."""
    finite = values[np.isfinite(values)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 0.0)
    half_span = hi / 2 - lo / 2
    with np.errstate(over="ignore", invalid="ignore"):
        frac = (values / 2 - lo / 2) / (half_span if half_span > 0 else 1.0)
    return np.clip(np.nan_to_num(frac, nan=0.0, posinf=1.0, neginf=0.0), 0.0, 1.0)


class Timeline:
    def __init__(self) -> None:
        self.rect = pygame.Rect(0, 0, 1, 1)
        self.n_frames = 1
        self._background: pygame.Surface | None = None
        self._key: tuple | None = None

    # ---- geometry --------------------------------------------------------------------------

    @property
    def track(self) -> pygame.Rect:
        """The horizontal span that maps to frames."""
        return pygame.Rect(
            self.rect.x + PAD, self.rect.y, max(1, self.rect.width - 2 * PAD), self.rect.height
        )

    def x_of(self, frame: int) -> int:
        t = self.track
        if self.n_frames <= 1:
            return t.x
        return t.x + round(frame * (t.width - 1) / (self.n_frames - 1))

    def frame_at(self, x: int) -> int:
        """The frame under pixel column ``x`` (clamped to the episode)."""
        t = self.track
        if self.n_frames <= 1 or t.width <= 1:
            return 0
        frac = (x - t.x) / (t.width - 1)
        return int(min(max(round(frac * (self.n_frames - 1)), 0), self.n_frames - 1))

    def person_spans(self, person: np.ndarray) -> list[tuple[int, int]]:
        """(x0, x1) pixel spans of the runs of person steps: step t spans frames t..t+1."""
        edges = np.diff(np.concatenate(([0], person.astype(np.int8), [0])))
        starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
        return [(self.x_of(int(a)), self.x_of(int(b))) for a, b in zip(starts, ends)]

    def invalidate(self) -> None:
        """Redraw the markers next time (another episode, new tags, new verification)."""
        self._background = None

    def hit(self, pos: tuple[int, int]) -> bool:
        return self.rect.collidepoint(pos)

    # ---- drawing ---------------------------------------------------------------------------

    def _build_background(self, ep: LoadedEpisode, divergence: int | None) -> pygame.Surface:
        surf = pygame.Surface(self.rect.size)
        surf.fill(theme.PANEL)
        ox, oy = self.rect.topleft
        track = self.track.move(-ox, -oy)
        bar = pygame.Rect(track.x, track.bottom - BAR_HEIGHT - 4, track.width, BAR_HEIGHT)
        pygame.draw.rect(surf, theme.PANEL_LIGHT, bar, border_radius=3)
        for x0, x1 in self.person_spans(ep.person):
            pygame.draw.rect(surf, PERSON, (x0 - ox, bar.y, max(1, x1 - x0), bar.height))
        plot = pygame.Rect(track.x, 4, track.width, bar.y - TICK_HEIGHT - 8)
        # Return so far, sampled once per pixel column.
        if plot.height > 4 and self.n_frames > 1:
            cols = np.arange(track.width)
            frames = np.rint(cols * (self.n_frames - 1) / max(track.width - 1, 1)).astype(int)
            values = ep.returns[frames]
            shown = values[~np.isnan(values)]
            lo, hi = (float(shown.min()), float(shown.max())) if shown.size else (0.0, 0.0)
            ys = plot.bottom - 1 - plot_heights(values) * (plot.height - 1)
            points = [(track.x + int(c), int(y)) for c, y in zip(cols, ys)]
            pygame.draw.lines(surf, theme.ACCENT, False, points, 2)
            font = theme.font(11, mono=True)
            surf.blit(
                font.render(f"return {hi:.4g}", True, theme.TEXT_DIM, theme.PANEL),
                (plot.x + 2, plot.y),
            )
            if hi > lo:
                surf.blit(
                    font.render(f"{lo:.4g}", True, theme.TEXT_DIM, theme.PANEL),
                    (plot.x + 2, plot.bottom - 12),
                )
            if ep.person.any():
                label = font.render("person", True, PERSON, theme.PANEL)
                surf.blit(label, label.get_rect(topright=(plot.right - 2, plot.y)))
        # Reward ticks: one per pixel column that holds a non-zero reward.
        tick_top = bar.y - TICK_HEIGHT - 2
        for sign, color in ((1, theme.GOOD), (-1, theme.BAD)):
            steps = np.flatnonzero(np.sign(ep.rewards) == sign)
            for x in np.unique([self.x_of(int(t) + 1) - ox for t in steps]):
                pygame.draw.line(surf, color, (x, tick_top), (x, tick_top + TICK_HEIGHT), 1)
        # End of episode.
        if ep.summary.terminated or ep.summary.truncated:
            x = self.x_of(self.n_frames - 1) - ox
            color = theme.BAD if ep.summary.terminated else theme.WARN
            pygame.draw.line(surf, color, (x, 2), (x, bar.bottom), 3)
        if divergence is not None:
            x = self.x_of(divergence) - ox
            pygame.draw.line(surf, theme.BAD, (x, 2), (x, bar.bottom), 2)
            pygame.draw.polygon(
                surf,
                theme.BAD,
                [(x - 6, bar.bottom + 4), (x + 6, bar.bottom + 4), (x, bar.bottom - 4)],
            )
        return surf

    def draw(
        self,
        surface: pygame.Surface,
        ep: LoadedEpisode,
        frame: int,
        marks: tuple[int | None, int | None],
        divergence: int | None,
        hover_x: int | None = None,
        checked: tuple[int, int] | None = None,
    ) -> None:
        """``checked``: (steps verified, steps in all) while verification of this episode
        runs (all 0 while its env starts), drawn as a strip that grows along the bar."""
        self.n_frames = ep.n_frames
        key = (self.rect.size, self.rect.topleft, id(ep), divergence)
        if self._background is None or key != self._key:
            self._background = self._build_background(ep, divergence)
            self._key = key
        surface.blit(self._background, self.rect.topleft)
        track = self.track
        bar_y = track.bottom - BAR_HEIGHT - 4
        mark_in, mark_out = marks
        if mark_in is not None or mark_out is not None:
            x0 = self.x_of(0 if mark_in is None else mark_in)
            x1 = self.x_of(self.n_frames - 1 if mark_out is None else mark_out)
            sel = pygame.Surface((max(1, x1 - x0 + 1), BAR_HEIGHT), pygame.SRCALPHA)
            sel.fill((*theme.WARN, 110))
            surface.blit(sel, (x0, bar_y))
            for m in (mark_in, mark_out):
                if m is not None:
                    x = self.x_of(m)
                    pygame.draw.line(
                        surface, theme.WARN, (x, bar_y - 4), (x, bar_y + BAR_HEIGHT), 2
                    )
        if checked is not None:
            done, total = checked
            x0 = self.x_of(0)
            x1 = self.x_of(min(done, self.n_frames - 1)) if total > 0 else x0
            strip = (x0, bar_y + BAR_HEIGHT - CHECKED_HEIGHT, max(1, x1 - x0), CHECKED_HEIGHT)
            pygame.draw.rect(surface, theme.ACCENT, strip)
            label = theme.font(11, mono=True).render(
                checked_label(done, total), True, theme.ACCENT, theme.PANEL
            )
            surface.blit(label, label.get_rect(bottomright=(track.right, bar_y - TICK_HEIGHT - 3)))
        x = self.x_of(frame)
        pygame.draw.line(surface, theme.TEXT, (x, track.y + 2), (x, track.bottom - 2), 2)
        pygame.draw.circle(surface, theme.TEXT, (x, bar_y + BAR_HEIGHT // 2), 6)
        if hover_x is not None and self.rect.collidepoint(hover_x, self.rect.centery):
            hovered = self.frame_at(hover_x)
            hx = self.x_of(hovered)
            pygame.draw.line(surface, theme.TEXT_DIM, (hx, bar_y), (hx, bar_y + BAR_HEIGHT), 1)
            label = theme.font(11, mono=True).render(
                f"{hovered}", True, theme.TEXT, theme.PANEL_LIGHT
            )
            spot = label.get_rect(midbottom=(hx, bar_y - 1))
            spot.clamp_ip(self.rect)
            surface.blit(label, spot)

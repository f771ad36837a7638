"""What the episode viewer does to the current episode's file: tag it, write its notes,
delete it, and start (then collect) the background jobs that verify, export or trim it or
save one frame."""

from __future__ import annotations

from pathlib import Path

from demostudio.assets import in_sample_demos
from demostudio.episode import EpisodeError, VerifyResult, update_metadata
from demostudio.episode.trim import trim_episode
from demostudio.export import FrameRange, default_output, export_episode, save_png
from demostudio.ui import theme
from demostudio.ui.settings import derived_output_folder

from .catalog import Catalog
from .jobs import BackgroundJob
from .loaded import LoadedEpisode
from .playback import Playback
from .qualityscan import QualityScan
from .timeline import Timeline
from .verify_process import VerifyProcess


class EpisodeActions:
    """The viewer's edits and jobs on the current episode (:class:`.viewer.Viewer` extends
    it). The state below is the viewer's, which makes it; so are the methods these call that
    are not defined here (``say``, ``open_current``, ``rescan``, ``select``)."""

    export_dir: Path
    catalog: Catalog
    episode: LoadedEpisode | None
    playback: Playback | None
    quality: QualityScan
    timeline: Timeline
    jobs: list[BackgroundJob | VerifyProcess]
    verify_results: dict[Path, VerifyResult]
    dirty: bool

    def _busy(self, path: Path) -> bool:
        if any(job.path == path and not job.finished for job in self.jobs):
            self.say("wait: a verification or export of this episode is still running", theme.WARN)
            return True
        return False

    def _edit_metadata(self, *, tags: list[str] | None = None, notes: str | None = None) -> None:
        entry = self.catalog.current
        if entry is None or self.episode is None or self._busy(entry.path):
            return
        if in_sample_demos(entry.path):
            self.say("a bundled sample is never written to: copy it to your recordings to "
                     "tag it or write notes", theme.WARN)  # fmt: skip
            return
        keep = self.playback
        self.episode.close()  # HDF5 will not open a file for writing while it is open to read
        self.episode = None
        try:
            with self.quality.lock:  # nor while the quality scan reads it
                update_metadata(entry.path, tags=tags, notes=notes)
            error = None
        except (EpisodeError, OSError) as exc:
            error = f"could not save to {entry.path.name}: {exc}"
        self.catalog.reload(self.catalog.index)
        self.open_current(keep=keep)
        summary = self.catalog.current.summary
        if error is not None or summary is None:
            self.say(error or f"{entry.path.name} cannot be read back", theme.BAD)
        elif tags is not None:
            self.say("tags: " + (", ".join(summary.tags) or "(none)"))
        else:
            self.say("notes saved")

    def toggle_tag(self, tag: str, exclusive: str | None = None) -> None:
        """Add ``tag`` (removing ``exclusive``), or remove it when the episode has it."""
        entry = self.catalog.current
        if entry is None or entry.summary is None:
            return
        tags = set(entry.summary.tags)
        if tag in tags:
            tags.discard(tag)
        else:
            tags.add(tag)
            tags.discard(exclusive)
        self._edit_metadata(tags=sorted(tags))

    def delete_current(self) -> None:
        entry = self.catalog.current
        if entry is None or self._busy(entry.path):
            return
        if self.episode is not None:
            self.episode.close()
            self.episode = None
        try:
            entry.path.unlink()
        except OSError as exc:
            self.say(f"could not delete {entry.path}: {exc}", theme.BAD)
            self.open_current()
            return
        self.verify_results.pop(entry.path, None)
        self.catalog.remove(self.catalog.index)
        self.open_current()
        self.say(f"deleted {entry.path.name}")

    # ---- jobs ------------------------------------------------------------------------------

    def start_verify(self) -> None:
        entry = self.catalog.current
        if self.episode is None or entry is None or self._busy(entry.path):
            return
        path = entry.path
        self.jobs.append(VerifyProcess(path))
        self.say("verifying by re-simulation (the timeline shows how far)...")

    def start_export(self, fmt: str) -> None:
        entry = self.catalog.current
        if self.episode is None or self.playback is None or entry is None:
            return
        if not self.episode.has_frames:
            self.say("this episode was recorded without frames: nothing to export", theme.WARN)
            return
        start, end = self.playback.selection()
        path = entry.path
        name = default_output(path, fmt, FrameRange(start, end), self.episode.n_frames).name
        out = self.export_dir / name

        def work(progress):
            return export_episode(path, fmt, out, start=start, end=end, progress=progress)

        self.jobs.append(BackgroundJob(f"export {fmt}", path, work))
        self.say(f"exporting frames {start}..{end} to {out}")

    def save_current_frame(self) -> None:
        if self.episode is None or self.playback is None or not self.episode.has_frames:
            return
        i = self.playback.frame
        self.export_dir.mkdir(parents=True, exist_ok=True)
        out = self.export_dir / f"{self.episode.path.name.removesuffix('.h5')}_frame{i:06d}.png"
        save_png(self.episode.frame(i), out)
        self.say(f"saved {out}")

    def start_trim(self, idle: bool) -> None:
        """Write the marked range (frames in..out, or the whole episode) as a new episode
        beside this one (a bundled sample's: in the recordings folder); ``idle`` also cuts
        the idle steps at both ends."""
        entry = self.catalog.current
        if self.playback is None or entry is None:
            return
        start, end = self.playback.selection()
        if end <= start:
            self.say("mark a range of at least one step to trim (I and O)", theme.WARN)
            return
        path = entry.path

        def work(progress):
            folder = derived_output_folder(path)
            return trim_episode(path, start=start, end=end, idle=idle, out_folder=folder)

        self.jobs.append(BackgroundJob("trim", path, work))
        self.say(f"trimming frames {start}..{end}" + (" (cutting idle ends)" if idle else ""))

    def _collect_jobs(self) -> None:
        for job in [j for j in self.jobs if j.finished]:
            self.jobs.remove(job)
            if job.error is not None:
                self.say(f"{job.label} failed: {job.error}", theme.BAD)
            elif job.label == "verify":
                self.verify_results[job.path] = job.result
                self.timeline.invalidate()
                self.say(job.result.describe(), theme.GOOD if job.result.ok else theme.BAD)
            elif job.label == "trim":
                r = job.result
                if not any(r.path.is_relative_to(root) for root in self.catalog.roots):
                    self.catalog.roots.append(r.path)  # opened on files: list it too
                self.rescan()
                paths = [e.path for e in self.catalog.entries]
                if r.path in paths:
                    self.select(paths.index(r.path))
                self.say(f"wrote {r.path.name} ({r.length} steps, frames {r.start}..{r.end})")
            else:
                r = job.result
                self.say(f"wrote {r.path} ({r.frames.count} frames)", theme.GOOD)
            self.dirty = True

    def verify_progress(self) -> tuple[int, int] | None:
        """(steps verified, steps in all) while the current episode is being verified (0, 0
        until the verifier has made the env); None when it is not."""
        entry = self.catalog.current
        for job in self.jobs:
            if isinstance(job, VerifyProcess) and entry is not None and job.path == entry.path:
                return job.done, job.total
        return None

    def divergence_frame(self) -> int | None:
        """The frame where the current episode's verification diverged (None if it did not
        or was not verified): step t's results are frame t + 1, the reset frame 0."""
        entry = self.catalog.current
        result = self.verify_results.get(entry.path) if entry else None
        if result is None or result.divergence is None:
            return None
        return result.divergence.step + 1

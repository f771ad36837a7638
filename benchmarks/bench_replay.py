"""Replay benchmark: seek + redraw latency, sustained playback rate and export rate.

Makes two episodes in a temporary folder (a 20,000-frame ALE/Breakout-v5 episode and a
2,000-frame 600x400 MountainCar-v0 episode, both with a random policy), opens the viewer on
each (headless SDL) and prints JSON figures:

* ``seek_ms``: seek to a random frame and redraw the whole window, median and p99
  (targets: median <= 5 ms, p99 <= 16 ms);
* ``playback``: the real viewer loop at 1x and 8x for a few seconds: content frames
  advanced per second against the target (fps * speed) and window redraws per second;
* ``export``: frames per second written to MP4 and GIF.

Run: ``python benchmarks/bench_replay.py [--seeks 400] [--seconds 3] [--keep DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import gymnasium as gym

from demostudio.episode import RecordEpisodes, make_env


class _Endless(gym.Wrapper):
    """Resets the inner env on game over so one recorded episode can be as long as asked."""

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        if terminated or truncated:
            obs, info = self.env.reset()
        return obs, reward, False, False, info


def make_episode(folder: Path, env_id: str, frames: int, **kwargs) -> Path:
    existing = [p for p in sorted(folder.glob("*.h5")) if _length(p) == frames - 1]
    if existing:  # --keep DIR from an earlier run
        return existing[0]
    env = make_env(env_id, kwargs, render_mode="rgb_array", max_episode_steps=10**7)
    rec = RecordEpisodes(_Endless(env), folder, controller="policy:random", player="bench")
    env.action_space.seed(0)
    rec.reset(seed=0)
    for _ in range(frames - 1):
        rec.step(env.action_space.sample())
    path = rec.end_episode(keep=True)
    rec.close()
    return path


def _length(path: Path) -> int:
    from demostudio.episode import read_summary

    return read_summary(path).length


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def bench_seek(viewer, seeks: int, rng: random.Random) -> dict:
    import pygame

    pb = viewer.playback
    viewer.draw()  # the first draw builds the list, timeline and font caches: not a seek
    times, cpu = [], []
    for _ in range(seeks):
        target = rng.randrange(pb.n_frames)
        t0, c0 = time.perf_counter(), time.thread_time()
        pb.seek(target)
        viewer.draw()
        pygame.display.flip()
        times.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.thread_time() - c0) * 1000)
    # Wall time includes waiting for a core on a busy machine; thread CPU time does not.
    return {
        "median_ms": round(statistics.median(times), 3),
        "p99_ms": round(_percentile(times, 0.99), 3),
        "max_ms": round(max(times), 3),
        "cpu_median_ms": round(statistics.median(cpu), 3),
        "cpu_p99_ms": round(_percentile(cpu, 0.99), 3),
        "seeks": seeks,
    }


def bench_playback(viewer, speed: float, seconds: float) -> dict:
    """Runs the viewer's own loop body (pump, update, draw, flip) at its frame cap."""
    import pygame

    from demostudio.replay.viewer import MAX_FPS

    pb = viewer.playback
    pb.set_speed(speed)
    pb.reverse = False
    pb.seek(0)
    pb.playing = True
    clock = pygame.time.Clock()
    clock.tick()
    start = time.perf_counter()
    redraws = 0
    while time.perf_counter() - start < seconds and pb.playing:
        dt = clock.tick(MAX_FPS) / 1000.0
        viewer.pump()
        viewer.update(dt)
        viewer.draw()
        pygame.display.flip()
        redraws += 1
    elapsed = time.perf_counter() - start
    target = pb.fps * speed
    achieved = pb.frame / elapsed
    pb.playing = False
    return {
        "speed": speed,
        "target_frames_per_s": round(target, 2),
        "achieved_frames_per_s": round(achieved, 2),
        "ratio": round(achieved / target, 3),
        "redraws_per_s": round(redraws / elapsed, 1),
        "seconds": round(elapsed, 2),
    }


def bench_export(path: Path, out_dir: Path, fmt: str, frames: int) -> dict:
    from demostudio.export import export_episode

    t0 = time.perf_counter()
    result = export_episode(path, fmt, out_dir / f"{path.stem}.{fmt}", end=frames - 1)
    elapsed = time.perf_counter() - t0
    return {
        "format": fmt,
        "frames": result.frames.count,
        "size": list(result.size),
        "seconds": round(elapsed, 2),
        "frames_per_s": round(result.frames.count / elapsed, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeks", type=int, default=400)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--atari-frames", type=int, default=20_000)
    parser.add_argument("--classic-frames", type=int, default=2_000)
    parser.add_argument(
        "--keep", type=Path, default=None, help="make the episodes here (reused by later runs)"
    )
    args = parser.parse_args()

    from demostudio.replay.viewer import Viewer

    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        t0 = time.perf_counter()
        episodes = {
            "atari": make_episode(
                root / "atari", "ALE/Breakout-v5", args.atari_frames, obs_type="ram"
            ),
            "classic_600x400": make_episode(
                root / "classic", "MountainCar-v0", args.classic_frames
            ),
        }
        report: dict = {"make_episodes_s": round(time.perf_counter() - t0, 1)}
        rng = random.Random(0)
        for name, path in episodes.items():
            viewer = Viewer([path], export_dir=root / "exports")
            figures = {
                "frames": viewer.episode.n_frames,
                "frame_shape": list(viewer.episode.file.frame_shape),
                "fps": viewer.playback.fps,
                "seek_ms": bench_seek(viewer, args.seeks, rng),
                "playback": [bench_playback(viewer, s, args.seconds) for s in (1.0, 8.0)],
            }
            viewer.close()
            figures["export"] = [
                bench_export(path, root / "exports", "mp4", min(2000, figures["frames"])),
                bench_export(path, root / "exports", "gif", min(300, figures["frames"])),
            ]
            report[name] = figures
        print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

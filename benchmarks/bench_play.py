"""Benchmark the play loop: per-step time with recording on and off, and steps vs frames saved.

Runs the real game loop (:class:`demostudio.play.PlaySession`: events, controller, env step,
recording, HUD drawing, window flip) headless with a seeded random controller, for
ALE/Breakout-v5 at frameskip 1 (60 steps/s real time) and MountainCar-v0 (30 steps/s). The
loop's wait for the next tick is switched off, so each figure is the work one tick does
(the budget at 60 Hz is 16.7 ms) and the writer thread gets no idle time between steps: the
worst case for dropping or blocking. A short real-time run at the env's own rate follows, to
show the rate the fixed-rate loop holds while recording.

Prints one JSON document. Usage::

    python benchmarks/bench_play.py [--steps 10000] [--realtime-seconds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

import numpy as np
import pygame

from demostudio.controllers import RandomController
from demostudio.episode import RecordEpisodes, make_env, open_episode
from demostudio.play.session import PlaySession, SessionOptions
from demostudio.play.timing import realtime_fps
from demostudio.play.tracking import TrackEpisodes
from demostudio.play.window import PlayWindow

GAMES = (
    ("ALE/Breakout-v5", {"frameskip": 1}),
    ("MountainCar-v0", {}),
)


def make_session(env_id: str, kwargs: dict, out: Path | None, fps: float, seed: int):
    env = make_env(env_id, kwargs, render_mode="rgb_array")
    env.reset(seed=seed)
    frame = env.render()
    if out is not None:
        wrapped = RecordEpisodes(env, out, controller="policy:random", fps=fps)
    else:
        wrapped = TrackEpisodes(env)
    window = PlayWindow(frame.shape[1], frame.shape[0], caption=f"bench {env_id}")
    opts = SessionOptions(env_id=env_id, fps=fps, countdown=0, seed=seed)
    return PlaySession(wrapped, RandomController(seed), window, opts)


class Ticks(NamedTuple):
    ms: np.ndarray
    """Work time of each tick (events, step, draw), without the wait for the next tick."""
    boundary: np.ndarray
    """Ticks whose step ended an episode (the file is closed and the next one reset)."""
    rate: float
    """Steps per second measured from the first to the last tick."""


def timed_ticks(session: PlaySession, steps: int, realtime: bool) -> Ticks:
    """Tick until ``steps`` env steps were taken."""
    session.new_episode()
    session.clock.set_fps(1.0 / session.clock.period if realtime else None)
    times, boundary, stamps = [], [], []
    taken = 0
    while taken < steps:
        before = session.steps
        done = session.episodes_done
        t0 = time.perf_counter()
        session.handle_events(pygame.event.get())
        session.step()
        session.draw()
        times.append((time.perf_counter() - t0) * 1e3)
        boundary.append(session.episodes_done != done)
        session.wait_for_next_tick()
        stamps.append(time.perf_counter())
        taken += 1
        assert session.steps == before + 1 or session.episodes_done == done + 1
    span = stamps[-1] - stamps[0]
    rate = (len(stamps) - 1) / span if span > 0 else float("inf")
    return Ticks(np.asarray(times), np.asarray(boundary), rate)


def frames_check(files: list[Path]) -> dict:
    steps = frames = bad = 0
    for path in files:
        with open_episode(path) as ep:
            n = len(ep)
            f = ep.h5["frames"].shape[0]
        steps += n
        frames += f
        bad += int(f != n + 1)
    return {"episodes": len(files), "steps_saved": steps, "frames_saved": frames, "bad_files": bad}


def stats(t: Ticks) -> dict:
    ms, inner = t.ms, t.ms[~t.boundary]
    out = {
        "median_ms": round(float(np.median(ms)), 3),
        "p99_ms": round(float(np.percentile(ms, 99)), 3),
        "mean_ms": round(float(ms.mean()), 3),
        "p99_within_episodes_ms": round(float(np.percentile(inner, 99)), 3),
    }
    if t.boundary.any():
        out["episode_end_ticks"] = int(t.boundary.sum())
        out["episode_end_max_ms"] = round(float(ms[t.boundary].max()), 3)
    return out


def bench_game(env_id: str, kwargs: dict, steps: int, realtime_seconds: float, tmp: Path) -> dict:
    env = make_env(env_id, kwargs)
    fps = realtime_fps(env)
    env.close()
    out: dict = {"env": env_id, "kwargs": kwargs, "realtime_fps": fps, "steps": steps}

    s = make_session(env_id, kwargs, None, fps, seed=1)
    off = timed_ticks(s, steps, realtime=False)
    s.quit(False)
    s.close()
    out["recording_off"] = stats(off)

    folder = tmp / env_id.replace("/", "-")
    s = make_session(env_id, kwargs, folder, fps, seed=1)
    on = timed_ticks(s, steps, realtime=False)
    s.end_now()  # save the episode in progress too: every step taken is on disk
    loop_steps = steps
    s.quit(False)
    t_close = time.perf_counter()
    s.close()
    out["recording_on"] = {
        **stats(on),
        "blocked_puts": int(s.env.blocked_puts),
        "close_wait_ms": round((time.perf_counter() - t_close) * 1e3, 1),
        "steps_per_s_unthrottled": round(on.rate, 1),
    }
    out["recording_adds_median_ms"] = round(
        out["recording_on"]["median_ms"] - out["recording_off"]["median_ms"], 3
    )
    check = frames_check(sorted(folder.glob("*.h5")))
    check["steps_taken"] = loop_steps
    check["steps_equal"] = check["steps_saved"] == loop_steps
    check["frames_equal_steps_plus_resets"] = (
        check["frames_saved"] == loop_steps + check["episodes"] and check["bad_files"] == 0
    )
    out["nothing_dropped_or_doubled"] = check

    if realtime_seconds > 0:
        n = max(2, int(realtime_seconds * fps))
        for label, folder in (("off", None), ("on", tmp / "realtime")):
            s = make_session(env_id, kwargs, folder, fps, seed=2)
            rt = timed_ticks(s, n, realtime=True)
            s.quit(False)
            s.close()
            out[f"realtime_recording_{label}"] = {
                "target_fps": fps,
                "measured_fps": round(rt.rate, 2),
                **stats(rt),
            }
        out["realtime_recording_adds_median_ms"] = round(
            out["realtime_recording_on"]["median_ms"] - out["realtime_recording_off"]["median_ms"],
            3,
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=10_000, help="steps per measurement")
    parser.add_argument(
        "--realtime-seconds", type=float, default=5.0, help="length of the real-time run"
    )
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="bench_play_") as tmp:
        for env_id, kwargs in GAMES:
            results.append(bench_game(env_id, kwargs, args.steps, args.realtime_seconds, Path(tmp)))
    doc = {
        "benchmark": "play loop",
        "target": "recording adds <= 1 ms median per step; frames saved = steps + resets",
        "cpu_count": os.cpu_count(),
        "results": results,
    }
    print(json.dumps(doc, indent=2))


if __name__ == "__main__":
    main()

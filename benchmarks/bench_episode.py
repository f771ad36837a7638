"""Episode store benchmark: prints JSON.

For Atari-sized (210x160) and classic-control-sized (400x600) frames, taken from the real envs:
* time the caller's thread spends per recorded step (median, p99), paced like play, and to
  start an episode file (the .partial and its journal);
* writer throughput when not paced, and how often the queue blocked;
* file size as a share of raw RGB;
* random frame read latency (median, p99) in a 20,000-frame episode, and time to open it.

Targets: median <= 0.5 ms and p99 <= 2 ms per step; Atari file <= 3% of raw;
frame read median <= 1 ms; open <= 50 ms.

    python benchmarks/bench_episode.py [--frames 20000] [--paced-steps 2000] [--rate 120]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from demostudio.episode import EpisodeWriter, make_env, open_episode


def _sample_frames(env_id: str, n: int, seed: int = 0) -> tuple[list[np.ndarray], object]:
    """Real frames (and observations) from a random-policy run of ``env_id``."""
    env = make_env(env_id, render_mode="rgb_array")
    obs, _ = env.reset(seed=seed)
    env.action_space.seed(seed)
    frames, observations = [env.render()], [obs]
    while len(frames) < n:
        obs, _, term, trunc, _ = env.step(env.action_space.sample())
        frames.append(env.render())
        observations.append(obs)
        if term or trunc:
            obs, _ = env.reset()
    env.close()
    return frames, (observations, env.observation_space, env.action_space)


def _pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values) * 1e3, q))


def bench(env_id: str, n_frames: int, paced_steps: int, rate: float, tmp: Path) -> dict:
    pool, (observations, obs_space, act_space) = _sample_frames(env_id, 400)
    attrs = {
        "env_id": env_id,
        "env_kwargs": {},
        "seed": 0,
        "controller": "benchmark",
        "recorded_at": "2026-01-01T00:00:00+00:00",
        "length": 0,
        "total_return": 0.0,
        "terminated": False,
        "truncated": False,
    }
    h, w, _ = pool[0].shape

    # 1. Paced like play: time added to the caller's thread per step (and to start a file).
    t0 = time.perf_counter()
    writer = EpisodeWriter(tmp / f"paced-{h}x{w}.h5", obs_space, act_space, attrs)
    create_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    writer.reset(observations[0], {}, pool[0])
    reset_s = time.perf_counter() - t0
    period = 1.0 / rate
    added = []
    next_t = time.perf_counter()
    for t in range(paced_steps):
        i = (t + 1) % len(pool)
        t0 = time.perf_counter()
        writer.step(0, observations[i], 0.0, False, False, {"lives": 3}, pool[i])
        added.append(time.perf_counter() - t0)
        next_t += period
        time.sleep(max(0.0, next_t - time.perf_counter()))
    paced_blocked = writer.blocked_puts
    t0 = time.perf_counter()
    paced_path = writer.close()
    close_s = time.perf_counter() - t0
    with open_episode(paced_path) as ep:  # as recorded in play, before any compact
        paced_kb = ep.h5["frames"].id.get_storage_size() / ep.h5["frames"].shape[0] / 1024

    # 2. Unpaced: a long episode written as fast as the writer takes it.
    path = tmp / f"long-{h}x{w}.h5"
    writer = EpisodeWriter(path, obs_space, act_space, attrs)
    writer.reset(observations[0], {}, pool[0])
    t0 = time.perf_counter()
    for t in range(n_frames - 1):
        i = (t + 1) % len(pool)
        writer.step(0, observations[i], 0.0, False, False, {"lives": 3}, pool[i])
    writer.close()
    write_s = time.perf_counter() - t0

    # 3. Open and random frame reads.
    opens = []
    for _ in range(20):
        t0 = time.perf_counter()
        with open_episode(path) as ep:
            _ = ep.summary.length
        opens.append(time.perf_counter() - t0)
    rng = np.random.default_rng(0)
    reads = []
    with open_episode(path) as ep:
        frames_bytes = ep.h5["frames"].id.get_storage_size()
        for i in rng.integers(0, n_frames, 2000):
            t0 = time.perf_counter()
            ep.frame(int(i))
            reads.append(time.perf_counter() - t0)
    raw = n_frames * h * w * 3
    return {
        "env": env_id,
        "frame_shape": [h, w, 3],
        "paced": {
            "steps": paced_steps,
            "rate_hz": rate,
            "caller_ms_median": round(_pct(added, 50), 4),
            "caller_ms_p99": round(_pct(added, 99), 4),
            "caller_ms_max": round(_pct(added, 100), 4),
            "queue_blocked": paced_blocked,
            "create_ms": round(create_s * 1e3, 2),
            "reset_ms": round(reset_s * 1e3, 2),
            "close_ms": round(close_s * 1e3, 1),
            "frame_kb_as_recorded": round(paced_kb, 3),
        },
        "unpaced": {
            "frames": n_frames,
            "steps_per_s": round((n_frames - 1) / write_s, 1),
            "queue_blocked": writer.blocked_puts,
        },
        "size": {
            "file_mb": round(path.stat().st_size / 2**20, 2),
            "raw_rgb_mb": round(raw / 2**20, 1),
            "frames_share_of_raw_pct": round(100 * frames_bytes / raw, 3),
            "file_share_of_raw_pct": round(100 * path.stat().st_size / raw, 3),
        },
        "open_ms_median": round(_pct(opens, 50), 3),
        "frame_read_ms_median": round(_pct(reads, 50), 4),
        "frame_read_ms_p99": round(_pct(reads, 99), 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=20_000, help="frames in the long episode")
    parser.add_argument("--paced-steps", type=int, default=2000, help="steps of the paced run")
    parser.add_argument(
        "--rate", type=float, default=120.0, help="steps/s of the paced run (play is 15-60)"
    )
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for env_id in ("ALE/Breakout-v5", "CartPole-v1"):
            results.append(bench(env_id, args.frames, args.paced_steps, args.rate, Path(tmp)))
    print(json.dumps({"benchmark": "episode_store", "results": results}, indent=2))


if __name__ == "__main__":
    main()

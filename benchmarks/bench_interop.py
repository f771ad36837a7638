"""Interop benchmark: Minari export / import throughput and the torch datasets' sample rate.

Records MountainCar-v0 episodes (scripted, 600x400 frames) and a short ALE/Breakout-v5
episode (random) into a temporary folder, then prints JSON figures:

* ``export``: steps per second written to a Minari dataset, without and with frames, and
  the dataset size per step;
* ``import``: steps per second read back, with frames copied from the dataset, with frames
  re-rendered by re-simulation, and without frames;
* ``torch``: samples per second through a ``DataLoader`` (batch 256) for transitions and for
  80-step segments, and the time to open the dataset.

Run: ``python benchmarks/bench_interop.py [--episodes 8] [--keep DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def _record_breakout(folder: Path, steps: int) -> Path:
    from demostudio.episode import RecordEpisodes, make_env

    env = make_env("ALE/Breakout-v5", render_mode="rgb_array", max_episode_steps=steps)
    rec = RecordEpisodes(env, folder / "ALE-Breakout-v5", controller="policy:random")
    rec.reset(seed=1)
    env.action_space.seed(1)
    done = False
    while not done:
        _, _, term, trunc, _ = rec.step(env.action_space.sample())
        done = term or trunc
    rec.close()
    return rec.saved[0]


def _minari_figures(root: Path, folder: Path, name: str, steps: int) -> dict:
    from demostudio.interop.minari import export_minari, import_minari

    out = {}
    for frames in (False, True):
        tag = "frames" if frames else "no_frames"
        ds, secs = _timed(
            lambda frames=frames, tag=tag: export_minari(
                [folder], f"bench/{name}-{tag}-v0", frames=frames, out=root
            )
        )
        out[f"export_{tag}_steps_per_s"] = round(steps / secs, 1)
        out[f"export_{tag}_bytes_per_step"] = round(_size(ds) / steps, 1)
    cases = {
        "frames_from_dataset": (f"{name}-frames", True),
        "frames_rerendered": (f"{name}-no_frames", True),
        "no_frames": (f"{name}-no_frames", False),
    }
    for label, (dataset, rerender) in cases.items():
        src = root / "bench" / f"{dataset}-v0"
        _, secs = _timed(
            lambda src=src, label=label, rerender=rerender: import_minari(
                str(src), root / "imported" / label / name, rerender_frames=rerender
            )
        )
        out[f"import_{label}_steps_per_s"] = round(steps / secs, 1)
    return out


def _torch_figures(folder: Path) -> dict:
    import torch
    from torch.utils.data import DataLoader

    from agents.dataset import SegmentDataset, TransitionDataset

    torch.set_num_threads(1)
    out = {}
    data, secs = _timed(lambda: TransitionDataset(folder))
    out["transitions_open_s"] = round(secs, 3)
    loader = DataLoader(data, batch_size=256, shuffle=True)
    n, t0 = 0, time.perf_counter()
    for _ in range(3):
        for batch in loader:
            n += batch.reward.shape[0]
    out["transitions_samples_per_s"] = round(n / (time.perf_counter() - t0), 1)
    segs = SegmentDataset(folder, 80, period=40)
    n, t0 = 0, time.perf_counter()
    for batch in DataLoader(segs, batch_size=32, shuffle=True):
        n += batch.reward.shape[0]
    out["segments80_samples_per_s"] = round(n / (time.perf_counter() - t0), 1)
    framed = TransitionDataset(folder, frames=True)
    n, t0 = 0, time.perf_counter()
    for i, batch in enumerate(DataLoader(framed, batch_size=64, shuffle=True)):
        n += batch.reward.shape[0]
        if i == 10:
            break
    out["transitions_with_frames_samples_per_s"] = round(n / (time.perf_counter() - t0), 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=8, help="MountainCar episodes")
    parser.add_argument("--breakout-steps", type=int, default=500)
    parser.add_argument("--keep", type=Path, default=None, help="work in this folder")
    args = parser.parse_args()

    from demostudio.cli.record_cmd import RecordConfig, record
    from demostudio.episode import read_summary

    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or Path(tmp)
        demos = work / "demos"
        mc = record(RecordConfig("MountainCar-v0", episodes=args.episodes, out=demos, seed=0))
        mc_steps = sum(read_summary(p).length for p in mc)
        breakout = _record_breakout(demos, args.breakout_steps)
        bo_steps = read_summary(breakout).length
        figures = {
            "mountaincar": {
                "episodes": len(mc),
                "steps": mc_steps,
                **_minari_figures(work / "minari", mc[0].parent, "mountaincar", mc_steps),
            },
            "breakout": {
                "steps": bo_steps,
                **_minari_figures(work / "minari", breakout.parent, "breakout", bo_steps),
            },
            "torch_mountaincar": _torch_figures(mc[0].parent),
        }
        print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()

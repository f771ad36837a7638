"""Crash drill: kill -9 a recording at random moments, recover, and measure what was lost.

Each round starts a child process that records Atari episodes (frames included) through
``RecordEpisodes`` with a random controller, paced like play, and reports every step it has
taken (``os.write`` of one line per step, so the parent knows exactly how far it got). The
parent kills it with SIGKILL at a random moment, or, for a share of the rounds, the instant the
writer thread starts an HDF5 flush (so the kill lands mid-flush), then runs ``recover`` on the
folder and compares:

* steps lost = steps the child had taken in the killed episode - steps recovered;
* seconds lost = the child's clock between its last step and the last recovered one.

For comparison it also recovers a copy of each ``.partial`` from HDF5 alone (no journal), the
way recovery worked before journals: how much that would have kept.

Prints JSON. The target: every kill recoverable, at most 1 s lost.

    python benchmarks/bench_crash.py [--kills 100] [--max-seconds 8] [--fps 60]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

from demostudio.episode import load_episode, recover_folder, recover_partial, scan, validate

# A zygote: imports everything once, then forks one recording child per round (a fresh
# interpreter per kill would spend most of the drill importing).
ZYGOTE = textwrap.dedent(
    """
    import os, sys, time
    from demostudio.controllers import RandomController
    from demostudio.episode import RecordEpisodes, _sink, make_env

    def say(line):  # one write per line: atomic on a pipe, whichever process or thread says it
        os.write(1, (line + "\\n").encode())

    flush = _sink.EpisodeSink.flush
    def reported_flush(self):
        say("flush-start")
        flush(self)
        say("flush-end")
    _sink.EpisodeSink.flush = reported_flush

    envs = {}  # made once in the zygote: every child starts with the env loaded

    def record(out, env_id, fps, seed):
        rec = RecordEpisodes(envs[env_id], out, controller="policy:random")
        ctrl = RandomController(seed)
        next_t = time.perf_counter()
        for episode in range(10**6):
            obs, info = rec.reset(seed=seed + episode)
            ctrl.reset(rec, obs, info)
            say(f"reset {episode}")
            done, t = False, 0
            while not done:
                obs, r, term, trunc, info = rec.step(ctrl.act(rec, obs))
                t += 1
                say(f"step {episode} {t} {time.time()!r}")
                done = term or trunc
                if fps:
                    next_t += 1.0 / fps
                    time.sleep(max(0.0, next_t - time.perf_counter()))

    say("ready")
    for command in sys.stdin:
        out, env_id, fps, seed = command.split()
        if env_id not in envs:
            envs[env_id] = make_env(env_id, render_mode="rgb_array")
        pid = os.fork()
        if pid == 0:
            try:
                record(out, env_id, float(fps), int(seed))
            finally:
                os._exit(1)
        say(f"pid {pid}")
        _, status = os.waitpid(pid, 0)
        say(f"exit {os.WTERMSIG(status) if os.WIFSIGNALED(status) else -1}")
    """
)


class Kill(NamedTuple):
    """One round: how far the child got, what came back."""

    seconds_alive: float
    aimed_at_flush: bool
    mid_flush: bool
    episode_seed: int
    steps_taken: int
    steps_recovered: int
    recovered: bool
    valid: bool
    steps_lost: int
    seconds_lost: float
    hdf5_only_steps: int | None
    """Steps a recovery from the HDF5 ``.partial`` alone would have kept (None: unusable)."""


class CrashDrill:
    """Kill recordings of ``env_id`` (paced at ``fps``, 0 for flat out) and measure the loss.
    Use as a context manager (it owns the zygote process)."""

    def __init__(self, env_id: str = "ALE/Pong-v5", fps: float = 60.0, compare: bool = True):
        self.env_id = env_id
        self.fps = fps
        self.compare = compare
        self._proc = subprocess.Popen(
            [sys.executable, "-c", ZYGOTE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "SDL_VIDEODRIVER": "dummy", "SDL_AUDIODRIVER": "dummy"},
        )
        self._lines: list[str] = []
        self._pid: int | None = None
        self._aim = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._wait_for(lambda: "ready" in self._lines, "the zygote did not start")

    def _read(self) -> None:
        """Collect the lines; when aiming, kill the child the moment a flush starts."""
        for raw in self._proc.stdout:
            line = raw.decode().strip()
            if line.startswith("pid "):
                self._pid = int(line.split()[1])
            self._lines.append(line)
            if line == "flush-start" and self._aim.is_set() and self._pid is not None:
                os.kill(self._pid, signal.SIGKILL)
                self._aim.clear()

    def _wait_for(self, ready, what: str, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            if self._proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{what} (zygote exit {self._proc.poll()})")
            time.sleep(0.002)

    def kill_once(self, folder: Path, seed: int, after_s: float, aim_at_flush: bool) -> Kill:
        """Record in a child, SIGKILL it ``after_s`` seconds after its first step (or at the
        first flush after that), recover ``folder`` and measure the killed episode."""
        self._lines.clear()
        self._pid = None
        self._proc.stdin.write(f"{folder} {self.env_id} {self.fps} {seed}\n".encode())
        self._proc.stdin.flush()
        self._wait_for(
            lambda: self._pid is not None and any(x.startswith("step ") for x in self._lines),
            "the recording child did not start",
        )
        started = time.monotonic()
        time.sleep(after_s)
        if aim_at_flush:
            self._aim.set()
        else:
            os.kill(self._pid, signal.SIGKILL)
        self._wait_for(lambda: any(x.startswith("exit ") for x in self._lines), "no exit", 30)
        alive = time.monotonic() - started
        lines = list(self._lines)
        exit_line = next(x for x in lines if x.startswith("exit "))
        if exit_line != f"exit {int(signal.SIGKILL)}":
            raise RuntimeError(f"expected the child killed by SIGKILL, got {exit_line!r}")
        return _measure(folder, seed, lines, alive, aim_at_flush, self.compare)

    def close(self) -> None:
        self._proc.stdin.close()
        self._proc.wait(timeout=30)

    def __enter__(self) -> CrashDrill:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _measure(
    folder: Path, seed: int, lines: list[str], alive: float, aimed: bool, compare: bool
) -> Kill:
    """What the kill cost: steps the child took in its last episode against those recovered
    (and, with ``compare``, what recovering the HDF5 ``.partial`` alone would have kept)."""
    starts = [i for i, line in enumerate(lines) if line == "flush-start"]
    mid_flush = bool(starts) and "flush-end" not in lines[starts[-1] :]
    resets = [line for line in lines if line.startswith("reset ")]
    episode = int(resets[-1].split()[1]) if resets else 0
    times = {
        int(t): float(when)
        for _, ep, t, when in (line.split() for line in lines if line.startswith("step "))
        if int(ep) == episode
    }
    taken = max(times, default=0)

    hdf5_only = None
    partials = list(folder.glob("*.h5.partial"))
    if partials and compare:  # what recovery from HDF5 alone (no journal) would have kept
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / partials[0].name
            shutil.copyfile(partials[0], copy)
            alone = recover_partial(copy)
            hdf5_only = alone.steps if alone.episode is not None else None
    recover_folder(folder)
    mine = [e for e in scan(folder) if e.summary and e.summary.seed == seed + episode]
    back = mine[0].summary.length if mine else 0
    valid = bool(mine) and validate(mine[0].path) == [] and len(load_episode(mine[0].path)) == back
    lost = max(0, taken - back)  # killed between a step and its progress line: -1
    seconds = times[taken] - times[max(back, 1)] if lost else 0.0
    return Kill(
        seconds_alive=round(alive, 3),
        aimed_at_flush=aimed,
        mid_flush=mid_flush,
        episode_seed=seed + episode,
        steps_taken=taken,
        steps_recovered=back,
        recovered=bool(mine) or taken == 0,
        valid=valid or taken == 0,
        steps_lost=lost,
        seconds_lost=round(seconds, 4),
        hdf5_only_steps=hdf5_only,
    )


def drill(
    kills: int,
    env_id: str = "ALE/Pong-v5",
    fps: float = 60.0,
    max_seconds: float = 8.0,
    flush_share: float = 0.25,
    seed: int = 0,
    progress: bool = False,
    compare: bool = True,
) -> dict:
    """``kills`` rounds at uniform random moments in [0, max_seconds] after the first step, a
    ``flush_share`` of them aimed at a flush. Returns the JSON summary with every round."""
    rng = random.Random(seed)
    rounds: list[Kill] = []
    with tempfile.TemporaryDirectory() as tmp, CrashDrill(env_id, fps, compare) as crash:
        for i in range(kills):
            folder = Path(tmp) / f"kill-{i:03d}"
            aim = rng.random() < flush_share
            k = crash.kill_once(folder, seed + 1000 * i, rng.uniform(0, max_seconds), aim)
            rounds.append(k)
            if progress:
                print(json.dumps({"kill": i, **k._asdict()}), file=sys.stderr, flush=True)
            shutil.rmtree(folder, ignore_errors=True)
    lost_s = np.array([k.seconds_lost for k in rounds])
    lost_steps = np.array([k.steps_lost for k in rounds])
    compared = [k for k in rounds if k.steps_taken and k.steps_recovered]
    hdf5_lost = [k.steps_taken - (k.hdf5_only_steps or 0) for k in compared]
    return {
        "benchmark": "crash_drill",
        "env": env_id,
        "fps": fps,
        "max_seconds": max_seconds,
        "count": len(rounds),
        "recovered_count": sum(k.recovered and k.valid for k in rounds),
        "aimed_at_flush": sum(k.aimed_at_flush for k in rounds),
        "killed_mid_flush": sum(k.mid_flush for k in rounds),
        "steps_taken_max": max(k.steps_taken for k in rounds),
        "seconds_lost_max": float(lost_s.max()),
        "seconds_lost_median": float(np.median(lost_s)),
        "steps_lost_max": int(lost_steps.max()),
        "steps_lost_median": float(np.median(lost_steps)),
        "hdf5_alone": {
            "unusable": sum(k.hdf5_only_steps is None for k in compared),
            "steps_lost_median": float(np.median(hdf5_lost)) if hdf5_lost else None,
            "steps_lost_max": int(max(hdf5_lost)) if hdf5_lost else None,
        },
        "kills": [k._asdict() for k in rounds],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=100, help="rounds (default: 100)")
    parser.add_argument("--env", default="ALE/Pong-v5", help="Atari env to record")
    parser.add_argument("--fps", type=float, default=60.0, help="steps/s of the child (0: max)")
    parser.add_argument(
        "--max-seconds", type=float, default=8.0, help="kill moments uniform in [0, this]"
    )
    parser.add_argument(
        "--flush-share", type=float, default=0.25, help="share of kills aimed at a flush"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    result = drill(
        args.kills, args.env, args.fps, args.max_seconds, args.flush_share, args.seed, True
    )
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()

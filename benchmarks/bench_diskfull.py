"""Full-disk drill: record until the disk is full, at every point of the episode writer.

Each run starts ``demostudio record CartPole-v1 --policy random`` in a child process and lets
the disk fill up, in one of two ways:

* injected: the child installs the fault layer of ``tests/episode/diskfull.py``, which makes
  the disk "full" at call AT (drawn at random per run) of one point of the writer (a new
  file, a chunk write, an HDF5 flush, a journal record, a journal sync, the finish, the
  fsync, the rename); from then on every write fails with ENOSPC;
* tmpfs: a real 3 MiB filesystem (``mount -t tmpfs`` inside ``unshare --mount``, so the mount
  dies with the run), the issue's own scenario. After the run, ``recover`` is tried on the
  still-full disk, then the filesystem is grown and ``recover`` runs again.

Each run is sorted into one outcome: ``hang`` (not done within --timeout: SIGTERM, then
SIGKILL five seconds later), ``crash`` (killed by a signal: a segmentation fault is rc 139 in a
shell, -11 here), ``clean`` (a non-zero exit with exactly one ``demostudio: error:`` line
saying there is no space and no traceback), ``other`` (any other exit) or ``not_fired`` (the
fault never came: every episode was saved). Then every saved episode is validated
(``lost`` counts those that no longer read back), and ``recover`` runs on what the failure
left. Prints JSON (and writes it with --json).

    python benchmarks/bench_diskfull.py [--runs 5] [--tmpfs-runs 9] [--tree DIR] [--json F]

``--tree`` runs the children against another checkout (to measure the code before a fix).
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
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FAULTS = ROOT / "tests" / "episode" / "diskfull.py"
ENV = "CartPole-v1"
NO_SPACE = os.strerror(28)
# Call numbers drawn per run, so each run fails a few episodes in (CartPole's random episodes
# are ~20 steps: ~22 journal records, one finish, fsync and rename each, and at the flush and
# journal-sync points, where the writer flushes every 50 ms, a few flushes and syncs).
AT_RANGES = {
    "create": (2, 8),
    "write": (40, 400),
    "flush": (3, 40),
    "journal": (40, 400),
    "journal-sync": (2, 20),
    "finish": (2, 8),
    "fsync": (2, 8),
    "rename": (2, 8),
}

# What the children run to look at a folder after a run, with the tree under test.
CHECK = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from demostudio.episode import validate, recover_folder
    folder = Path(sys.argv[1])
    saved = sorted(folder.glob("**/*.h5"))
    lost = [str(p) for p in saved if validate(p)]
    left = sorted(folder.glob("**/*.h5.partial")) + sorted(folder.glob("**/*.h5.journal"))
    report = {"saved": len(saved), "lost": len(lost), "leftovers": len(left)}
    if len(sys.argv) > 2 and sys.argv[2] == "recover":
        results = recover_folder(folder)
        ok = [r for r in results if r.episode is not None and not validate(r.episode)]
        report["recovered"] = len(ok)
        report["unusable"] = [r.reason[:200] for r in results if r.episode is None]
    print(json.dumps(report))
    """
)


def _env(tree: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree), "SDL_VIDEODRIVER": "dummy"}


def _cwd(env: dict[str, str]) -> str:
    """Children run in the tree under test: ``python -c`` puts the working folder first on
    ``sys.path``, ahead of PYTHONPATH."""
    return env["PYTHONPATH"]


def _run_child(cmd: list[str], env: dict[str, str], timeout: float) -> dict:
    """Run ``cmd``; its outcome and stderr lines (progress bars dropped)."""
    start = time.monotonic()
    proc = subprocess.Popen(
        cmd, env=env, cwd=_cwd(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    hung = sigterm_stopped = False
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        hung = True
        proc.send_signal(signal.SIGTERM)
        try:
            out, err = proc.communicate(timeout=5)
            sigterm_stopped = True
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
    seconds = time.monotonic() - start
    lines = [line for line in err.replace("\r", "\n").splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith(f"record {ENV}:")]
    rc = proc.returncode
    errors = [line for line in lines if line.startswith("demostudio: error:")]
    if hung:
        outcome = "hang"
    elif rc < 0 or (rc >= 128 and rc != 130):
        outcome = "crash"
    elif rc == 0:
        outcome = "not_fired"
    elif len(lines) == 1 and len(errors) == 1 and NO_SPACE in errors[0]:
        outcome = "clean"
    else:
        outcome = "other"
    return {
        "outcome": outcome,
        "rc": rc,
        "seconds": round(seconds, 2),
        "sigterm_stopped": sigterm_stopped if hung else None,
        "stderr": lines[-3:],
        "stdout": out.splitlines()[-3:],
    }


def _check(folder: Path, env: dict[str, str], recover: bool) -> dict:
    args = [sys.executable, "-c", CHECK, str(folder)] + (["recover"] if recover else [])
    done = subprocess.run(args, env=env, cwd=_cwd(env), capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        return {"check_failed": done.stderr[-500:]}
    return json.loads(done.stdout)


def record_args(episodes: int, seed: int) -> list[str]:
    return ["record", ENV, "--policy", "random", "--episodes", str(episodes), "--seed", str(seed)]


def injected_run(tree: Path, point: str, at: int, episodes: int, seed: int, timeout: float):
    """One injected run: the child's outcome, then what is on disk and what recovers."""
    env = _env(tree)
    with tempfile.TemporaryDirectory(prefix="diskfull-") as tmp:
        out = Path(tmp)
        cmd = [sys.executable, str(FAULTS), point, str(at), "--"]
        cmd += [*record_args(episodes, seed), "--out", str(out)]
        run = _run_child(cmd, env, timeout)
        before = _check(out, env, recover=False)
        after = _check(out, env, recover=True)  # the child is gone: there is room again
    return {"point": point, "at": at, **run, "before_recover": before, "after_recover": after}


def _inside_tmpfs(args: argparse.Namespace) -> None:
    """In the private mount namespace: mount the tiny tmpfs, run one recording until full,
    try recover on the full disk, grow the disk, recover. Prints one JSON line."""
    mnt = Path(args.inside)
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={args.size}", "tmpfs", str(mnt)], check=True
    )
    env = _env(Path(args.tree))
    cmd = [sys.executable, "-c", "import sys; from demostudio.cli import main; sys.exit(main())"]
    cmd += [*record_args(args.episodes, args.seed), "--out", str(mnt)]
    run = _run_child(cmd, env, args.timeout)
    before = _check(mnt, env, recover=False)
    recover_cmd = [sys.executable, "-c", "import sys; from demostudio.cli import main; "
                   "sys.exit(main())", "recover", str(mnt)]  # fmt: skip
    full = _run_child(recover_cmd, env, args.timeout) if before.get("leftovers") else None
    if full is not None:
        words = " ".join(full["stderr"] + full["stdout"])
        full["says_no_space"] = NO_SPACE in words
        full["says_damaged"] = "damaged" in words or "unusable" in words
    subprocess.run(["mount", "-o", "remount,size=256m", str(mnt)], check=True)
    after = _check(mnt, env, recover=True)
    print(json.dumps({**run, "before_recover": before, "recover_on_full_disk": full,
                      "after_recover": after}))  # fmt: skip


def tmpfs_run(tree: Path, size: str, episodes: int, seed: int, timeout: float) -> dict:
    """One run on a real ``size`` tmpfs, in a private mount namespace (root, or an
    unprivileged user namespace); ``{"unavailable": why}`` where neither works."""
    if shutil.which("unshare") is None:
        return {"unavailable": "no unshare command"}
    with tempfile.TemporaryDirectory(prefix="diskfull-tmpfs-") as tmp:
        me = [sys.executable, str(Path(__file__).resolve()), "--inside", tmp, "--tree", str(tree)]
        me += ["--size", size, "--episodes", str(episodes), "--seed", str(seed)]
        me += ["--timeout", str(timeout)]
        flags = ["--mount"] if os.geteuid() == 0 else ["--mount", "--map-root-user"]
        done = subprocess.run(
            ["unshare", *flags, *me], capture_output=True, text=True, timeout=timeout * 3 + 120
        )
    if done.returncode != 0 or not done.stdout.strip():
        return {"unavailable": (done.stderr.strip().splitlines() or ["unshare failed"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def summarize(runs: list[dict]) -> dict:
    keys = ("hang", "crash", "clean", "other", "not_fired")
    summary = {k: sum(r.get("outcome") == k for r in runs) for k in keys}
    summary["runs"] = len(runs)
    summary["lost_earlier_episodes"] = sum(r["before_recover"].get("lost", 0) for r in runs)
    summary["saved_episodes"] = sum(r["before_recover"].get("saved", 0) for r in runs)
    summary["leftovers_kept"] = sum(r["before_recover"].get("leftovers", 0) > 0 for r in runs)
    summary["recovered"] = sum(r["after_recover"].get("recovered", 0) for r in runs)
    summary["recover_unusable"] = sum(len(r["after_recover"].get("unusable", [])) for r in runs)
    summary["sigterm_stopped_hangs"] = sum(bool(r.get("sigterm_stopped")) for r in runs)
    summary["seconds_max"] = max((r["seconds"] for r in runs), default=0)
    full = [r["recover_on_full_disk"] for r in runs if r.get("recover_on_full_disk")]
    if full:
        summary["recover_on_full_disk"] = {
            "runs": len(full),
            "says_no_space": sum(f["says_no_space"] for f in full),
            "says_damaged_or_unusable": sum(f["says_damaged"] for f in full),
            "hang_or_crash": sum(f["outcome"] in ("hang", "crash") for f in full),
        }
    return summary


def drill(
    tree: Path,
    points: list[str],
    runs: int,
    tmpfs_runs: int,
    episodes: int,
    timeout: float,
    seed: int = 0,
    size: str = "3m",
) -> dict:
    rng = random.Random(seed)
    result: dict = {"tree": str(tree), "env": ENV, "episodes_asked": episodes, "points": {}}
    for point in points:
        lo, hi = AT_RANGES[point]
        done = [
            injected_run(tree, point, rng.randint(lo, hi), episodes, rng.randrange(10**6), timeout)
            for _ in range(runs)
        ]
        result["points"][point] = {**summarize(done), "details": done}
        print(point, json.dumps(summarize(done)), file=sys.stderr, flush=True)
    if tmpfs_runs:
        done = [
            tmpfs_run(tree, size, 1000, rng.randrange(10**6), timeout) for _ in range(tmpfs_runs)
        ]
        if any("unavailable" in r for r in done):
            result["tmpfs"] = {"unavailable": next(r for r in done if "unavailable" in r)}
        else:
            result["tmpfs"] = {"size": size, **summarize(done), "details": done}
            print("tmpfs", json.dumps(summarize(done)), file=sys.stderr, flush=True)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per injected point")
    parser.add_argument("--points", nargs="*", default=list(AT_RANGES), choices=list(AT_RANGES))
    parser.add_argument("--tmpfs-runs", type=int, default=9, help="runs on a real tiny tmpfs")
    parser.add_argument("--size", default="3m", help="size of the tmpfs (default: 3m)")
    parser.add_argument("--episodes", type=int, default=60, help="episodes an injected run asks")
    parser.add_argument("--timeout", type=float, default=90.0, help="seconds before a hang")
    parser.add_argument("--tree", type=Path, default=ROOT, help="checkout the children run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the result here")
    parser.add_argument("--inside", help=argparse.SUPPRESS)  # one tmpfs run, in its namespace
    args = parser.parse_args(argv)
    if args.inside:
        _inside_tmpfs(args)
        return 0
    result = drill(
        args.tree.resolve(), args.points, args.runs, args.tmpfs_runs, args.episodes,
        args.timeout, args.seed, args.size,
    )  # fmt: skip
    text = json.dumps(result, indent=1)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

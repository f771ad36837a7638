"""Screen a Reactor CartPole setting against the strict criterion; prints one JSON object.

  python benchmarks/bench_reactor_screen.py [--seeds 0 1 ... 11] [--budget 40000]
      [--jobs 2] [--all] [--set FIELD=VALUE ...] [--work DIR] [--read]

A --set VALUE is JSON (``batch_size=64``, ``v_min=-10``, ``learning_rate_final=null``), or
plain text for a field that takes text (``mirror=env``, ``env=Acrobot-v1``).

The every-seed criterion is "every evaluation after the first mean >= 475 stays >= 475 to
the end of the budget, on every seed". A setting that dips on one seed has failed it, so
there is no need to finish its other runs: each seed runs as its own
``bench_reactor.py cartpole`` process (``--jobs`` side by side, one torch thread each), its
metrics are read as they are written, and a run is stopped at its first evaluation below
475 after its first >= 475. Without ``--all`` the screen then stops every run and starts no
more seeds; with it, every seed runs (to count how many hold). A seed that holds costs a
whole run; a setting that fails usually costs a few minutes.

Statuses per seed: ``stable`` (ran the budget, first 475 reached, held), ``dipped`` (stopped
at the evaluation named by ``dipped_at``), ``never`` (the budget ran out before 475),
``stopped`` (killed because another seed dipped), ``error`` (the run failed: its stderr's
last line), ``not_run``. ``verdict`` is ``stable on every seed`` only when every seed is.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = 475.0


Curve = list[tuple[int, float]]
"""Evaluations as ``(env steps, mean return)``."""


def first_dip(curve: Curve, target: float = TARGET) -> tuple[int | None, int | None]:
    """``(index of the first evaluation >= target, index of the first later one below it)``,
    either None when there is none."""
    hit = next((i for i, (_, v) in enumerate(curve) if v >= target), None)
    if hit is None:
        return None, None
    return hit, next((i for i in range(hit + 1, len(curve)) if curve[i][1] < target), None)


def read_rows(work: Path, kind: str) -> list[dict]:
    """The metrics rows of ``kind`` written so far by the run under ``work`` (a line being
    written is skipped)."""
    from agents.core.logger import read_metrics

    rows = []
    for path in sorted(work.glob("runs/*/metrics.jsonl")):
        for row in read_metrics(path.parent, skip_bad=True):
            if isinstance(row, dict) and row.get("kind") == kind:
                rows.append(row)
    return sorted(rows, key=lambda r: r["env_steps"])


def read_curve(work: Path) -> Curve:
    """The evaluations written so far by the run under ``work``."""
    return [(int(r["env_steps"]), float(r["eval_return"])) for r in read_rows(work, "eval")]


def json_sets(p: argparse.ArgumentParser, items: list[str]) -> list[str]:
    """``FIELD=VALUE`` items with every VALUE as JSON, as ``bench_reactor.py --set`` reads
    them: a value that is not JSON is a string (``mirror=env`` is ``mirror="env"``) where the
    field takes text; for any other field it ends the run with one line."""
    from typing import Literal, get_args, get_origin, get_type_hints

    from agents.registry import get_algorithm

    hints = get_type_hints(get_algorithm("reactor").config_cls)

    def takes_text(tp) -> bool:
        if tp is str:
            return True
        if get_origin(tp) is Literal:
            return all(isinstance(a, str) for a in get_args(tp))
        return any(takes_text(a) for a in get_args(tp))  # str | None

    def choices(tp) -> tuple:
        if get_origin(tp) is Literal:
            return get_args(tp)
        return next((c for a in get_args(tp) if (c := choices(a))), ())

    out = []
    for kv in items:
        field, eq, value = kv.partition("=")
        if not (eq and field in hints):
            out.append(kv)  # parse_overrides names what is wrong with it
            continue
        try:
            given = json.loads(value)
        except json.JSONDecodeError:
            if not takes_text(hints[field]):
                p.error(f"--set {kv}: expected FIELD=JSON ({field} takes no text), got {value!r}")
            given = value
        allowed = choices(hints[field])
        if allowed and given not in allowed and given is not None:
            p.error(f"--set {kv}: expected one of {', '.join(map(str, allowed))}, got {given!r}")
        out.append(f"{field}={json.dumps(given)}")
    return out


def bench_command(budget: int, sets: list[str]):
    """The command of one seed's run: ``bench_reactor.py cartpole`` with the overrides."""

    def command(seed: int, work: Path) -> list[str]:
        cmd = [sys.executable, str(ROOT / "benchmarks" / "bench_reactor.py"), "cartpole",
               "--seeds", str(seed), "--budget", str(budget), "--work", str(work)]  # fmt: skip
        return cmd + (["--set", *sets] if sets else [])

    return command


class Run:
    """One seed's process (writing ``work/runs/*/metrics.jsonl``) and its work folder."""

    def __init__(self, seed: int, work: Path, command):
        self.seed, self.work = seed, work / f"seed{seed}"
        shutil.rmtree(self.work, ignore_errors=True)
        self.work.mkdir(parents=True)
        self.err = self.work / "stderr.txt"
        with open(self.err, "wb") as err:
            self.proc = subprocess.Popen(command(seed, self.work), cwd=ROOT,
                                         stdout=subprocess.DEVNULL, stderr=err,
                                         start_new_session=True)  # fmt: skip

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def result(self, status: str, curve: Curve) -> dict:
        out = run_result(self.seed, self.work, status, curve)
        if status == "error":
            lines = self.err.read_text(encoding="utf-8", errors="replace").strip().splitlines()
            out["error"] = lines[-1] if lines else f"exit status {self.proc.returncode}"
        return out


def run_result(seed: int, work: Path, status: str, curve: Curve) -> dict:
    """One seed's entry of the screen's JSON (``work``: its folder)."""
    hit, dip = first_dip(curve)
    out = {"seed": seed, "status": status,
           "first_475_at": None if hit is None else curve[hit][0],
           "dipped_at": None if dip is None else list(curve[dip]),
           "curve": [[s, round(v, 1)] for s, v in curve]}  # fmt: skip
    tests = read_rows(work, "gate")
    if tests:  # a deployment gate: the curve above is the deployed network's
        # the learner's network at each test: env steps, worst episode, episodes played
        # (a test stops at the first that fails), deployed or not
        out["gate_tests"] = [[r["env_steps"], round(r["gate_worst"], 1), r["gate_played"],
                              bool(r["gate_passed"])] for r in tests]  # fmt: skip
    return out


def reread(seeds: list[int], work: Path, budget: int) -> dict:
    """A finished screen's result again from its work folder (``--read``), with the gate
    tests of runs that had a deployment gate: ``stable`` / ``dipped`` / ``never`` as the
    screen decides them, ``incomplete`` for a run stopped before its budget."""
    runs = []
    for seed in seeds:
        folder = work / f"seed{seed}"
        curve = read_curve(folder)
        hit, dip = first_dip(curve)
        if dip is not None:
            status = "dipped"
        elif not curve or curve[-1][0] < budget:
            status = "incomplete" if curve else "not_run"
        else:
            status = "stable" if hit is not None else "never"
        runs.append(run_result(seed, folder, status, curve))
    stable = sum(r["status"] == "stable" for r in runs)
    return {"verdict": f"{stable} of {len(seeds)} stable", "stable": stable, "of": len(seeds),
            "runs": runs}  # fmt: skip


def screen(seeds: list[int], jobs: int, every: bool, work: Path, command,
           poll_s: float = 2.0) -> dict:  # fmt: skip
    """Run ``command(seed, work)`` for each seed, ``jobs`` at a time, and stop each run at
    its first dip (and, unless ``every``, the whole screen); see the module docstring."""
    pending, running, done = list(seeds), [], {}
    failed = False
    t0 = time.perf_counter()
    while running or (pending and not failed):
        while pending and not failed and len(running) < jobs:
            running.append(Run(pending.pop(0), work, command))
        time.sleep(poll_s)
        for run in list(running):
            curve = read_curve(run.work)
            hit, dip = first_dip(curve)
            code = run.proc.poll()
            if dip is None and code is None:
                continue
            run.stop()
            running.remove(run)
            if dip is not None:
                status = "dipped"
            elif code != 0:
                status = "error"
            else:
                status = "stable" if hit is not None else "never"
            done[run.seed] = run.result(status, curve)
            if status != "stable" and not every:
                failed = True
                for other in running:
                    other.stop()
                    seen = read_curve(other.work)  # it may have dipped by now as well
                    status = "stopped" if first_dip(seen)[1] is None else "dipped"
                    done[other.seed] = other.result(status, seen)
                running.clear()
                break
    runs = [done.get(s, {"seed": s, "status": "not_run"}) for s in seeds]
    bad = next((r for r in runs if r["status"] not in ("stable", "not_run", "stopped")), None)
    stable = sum(r["status"] == "stable" for r in runs)
    if bad is None and stable == len(seeds):
        verdict = "stable on every seed"
    elif bad is None:
        verdict = f"{stable} of {len(seeds)} stable"
    elif bad["status"] == "dipped":
        verdict = f"dipped on seed {bad['seed']}: {bad['dipped_at'][1]} at {bad['dipped_at'][0]}"
    else:
        verdict = f"{bad['status']} on seed {bad['seed']}"
    return {"verdict": verdict, "stable": stable, "of": len(seeds),
            "wall_s": round(time.perf_counter() - t0, 1), "runs": runs}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seeds", type=int, nargs="+", default=list(range(12)))
    p.add_argument("--budget", type=int, default=40_000, help="env steps per run")
    p.add_argument("--jobs", type=int, default=2, help="runs side by side")
    p.add_argument("--all", action="store_true", help="run every seed, even after a dip")
    p.add_argument("--set", nargs="*", default=[], metavar="FIELD=VALUE",
                   help="config overrides for every run, as bench_reactor.py's (VALUE: JSON, "
                        "or plain text for a field that takes text: mirror=env)")  # fmt: skip
    p.add_argument("--work", default="/tmp/demostudio-bench-reactor-screen")
    p.add_argument("--read", action="store_true",
                   help="run nothing: report the runs already in --work")  # fmt: skip
    args = p.parse_args(argv)
    if args.jobs < 1 or args.budget < 1:
        p.error(f"--jobs and --budget: expected >= 1, got {args.jobs} and {args.budget}")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_reactor import parse_overrides

    args.set = json_sets(p, args.set)
    parse_overrides(p, args.set)  # the runs' own check, before any run starts
    if args.read:
        result = reread(args.seeds, Path(args.work), args.budget)
    else:
        command = bench_command(args.budget, args.set)
        result = screen(args.seeds, args.jobs, args.all, Path(args.work), command)
    out = {"benchmark": "reactor-cartpole-screen", "budget": args.budget, "set": args.set,
           **result}  # fmt: skip
    json.dump(out, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())

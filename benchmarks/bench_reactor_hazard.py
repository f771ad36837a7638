"""How often an evaluation at or above a target is followed by one below it; prints JSON.

  python benchmarks/bench_reactor_hazard.py RUN_DIR [RUN_DIR ...] [--target 475]
      [--rows ROWS.json]
  python benchmarks/bench_reactor_hazard.py --from-rows ROWS.json [--target 475]

Over every training run given (folders with a metrics.jsonl, e.g. the ``runs/*`` of
``bench_reactor.py cartpole --work DIR``), take each evaluation from the run's first one
>= target on that is itself >= target and has a next one; the hazard is the share of those
whose next evaluation falls below the target. It is given by the evaluation's env steps
(per 10,000) and by the mean training return over the 2,500 env steps before it (the
actors' episodes that ended there, which lag the evaluated network by up to an episode).
``--rows`` writes the per-evaluation rows (compact columns; ``run`` is the folder as
given), ``--from-rows`` reads them back instead of run folders. The strict criterion of
``bench_reactor_screen.py`` fails on a seed as soon as one such fall happens, so a hazard h
over n later evaluations leaves about (1 - h)^n of seeds stable.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

COLUMNS = ("run", "env_steps", "eval_return", "next_eval_return", "train_return")
WINDOW = 2_500
RETURN_BANDS = {"<300": (-float("inf"), 300.0), "300-450": (300.0, 450.0),
                "450-490": (450.0, 490.0), ">=490": (490.0, float("inf"))}  # fmt: skip
"""Bands of the mean training return before an evaluation: label -> [low, high)."""


def rows_of_run(run: Path) -> list[list]:
    """One row per evaluation of ``run`` (``COLUMNS``; missing values None)."""
    from agents.core.logger import read_metrics

    metrics = [  # a line being written, or a damaged one, is not an evaluation to count
        row
        for row in read_metrics(run, skip_bad=True)
        if isinstance(row, dict) and isinstance(row.get("env_steps"), int | float)
    ]
    evals = [(i, r) for i, r in enumerate(metrics) if r.get("kind") == "eval"]
    out = []
    for k, (i, r) in enumerate(evals):
        window = [
            float(x["episode_return"])
            for x in metrics[:i]
            if x.get("kind") != "eval"
            and isinstance(x.get("episode_return"), int | float)
            and x["env_steps"] > r["env_steps"] - WINDOW
        ]
        nxt = evals[k + 1][1]["eval_return"] if k + 1 < len(evals) else None
        train = round(sum(window) / len(window), 1) if window else None
        out.append([str(run), int(r["env_steps"]), float(r["eval_return"]), nxt, train])
    return out


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _valid_row(row: object) -> bool:
    """A row of ``COLUMNS``: a name, env steps, a return, and two returns or None."""
    return (
        isinstance(row, list)
        and len(row) == len(COLUMNS)
        and isinstance(row[0], str)
        and isinstance(row[1], int)
        and _number(row[2])
        and all(v is None or _number(v) for v in row[3:])
    )


def _band(value: float | None) -> str | None:
    if value is None:
        return None
    return next(k for k, (lo, hi) in RETURN_BANDS.items() if lo <= value < hi)


def hazard(rows: list[list], target: float) -> dict:
    """The hazard table of the module docstring from ``rows`` (``COLUMNS``)."""
    reached: set[str] = set()
    by_steps: dict[str, list[int]] = {}
    by_train: dict[str, list[int]] = {}
    total = [0, 0]
    for run, steps, value, nxt, train in rows:  # every one >= target is from the first on
        if value < target:
            continue
        reached.add(run)
        if nxt is None:
            continue
        fell = int(nxt < target)
        keys = [(by_steps, f"{steps // 10_000 * 10}k-{steps // 10_000 * 10 + 10}k")]
        band = _band(train)
        if band is not None:
            keys.append((by_train, band))
        for table, key in keys:
            cell = table.setdefault(key, [0, 0])
            cell[0] += 1
            cell[1] += fell
        total[0] += 1
        total[1] += fell

    def show(table: dict[str, list[int]]) -> dict:
        return {k: {"evaluations": n, "next_below": f, "hazard": round(f / n, 3)}
                for k, (n, f) in table.items()}  # fmt: skip

    steps_order = sorted(by_steps, key=lambda k: int(k.split("k")[0]))
    return {
        "target": target,
        "runs": len({r[0] for r in rows}),
        "runs_reaching_target": len(reached),
        "all": show({"all": total})["all"] if total[0] else None,
        "by_env_steps": show({k: by_steps[k] for k in steps_order}),
        "by_train_return_before": show({k: by_train[k] for k in RETURN_BANDS if k in by_train}),
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("runs", nargs="*", type=Path, help="run folders (with metrics.jsonl)")
    p.add_argument("--target", type=float, default=475.0)
    p.add_argument("--rows", type=Path, help="write the per-evaluation rows here")
    p.add_argument("--from-rows", type=Path, help="read rows written by --rows instead")
    args = p.parse_args(argv)
    if args.from_rows is not None:
        try:
            data = json.loads(args.from_rows.read_text(encoding="utf-8"))
            rows = data["rows"]
            if data.get("columns") != list(COLUMNS) or not all(map(_valid_row, rows)):
                raise ValueError
        except (OSError, ValueError, KeyError, TypeError):
            p.error(f"{args.from_rows}: expected a rows file of --rows, with columns {COLUMNS}")
    else:
        missing = [str(r) for r in args.runs if not (r / "metrics.jsonl").is_file()]
        if not args.runs or missing:
            p.error(f"expected run folders with a metrics.jsonl, got none in {missing or '[]'}")
        if len(set(args.runs)) < len(args.runs):
            p.error("expected each run folder once (rows are keyed by the folder as given)")
        rows = [row for run in args.runs for row in rows_of_run(run)]
    if args.rows is not None:
        args.rows.write_text(json.dumps({"columns": list(COLUMNS), "rows": rows}), "utf-8")
    json.dump(hazard(rows, args.target), sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())

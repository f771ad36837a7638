"""Compare learning-from-demonstration algorithms on one env: the same demo folder, the
same env-step budget, several seeds each; a markdown table (final evaluation return, env
steps to a threshold, wall time, and the agent against the person: the share of the demos'
return reached and the human-normalised score (agent - random) / (demos - random), the
random policy measured in the same comparison) and one PNG of the learning curves with the
demos' returns.

Every finished run is appended to ``OUT/results.jsonl`` at once, so an interrupted
comparison (Ctrl-C, SIGTERM, SIGHUP: the run under way saves its state marked interrupted)
keeps what it finished and a rerun with the same ``OUT`` skips those runs.
"""

from __future__ import annotations

import dataclasses
import json
import math
import multiprocessing
import os
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple, Protocol

import numpy as np

from agents.core.plotting import (
    demo_returns,
    draw_demo_band,
    fmt_return,
    legend_below,
    line_style,
)
from agents.core.stopping import check_stop, stop_children, stop_signals
from demostudio.episode import EpisodeError, env_folder_name, find_episodes, read_summary
from demostudio.episode.jsonfile import read_json_lines

FINAL_EVAL_SEED = 1_000_000
"""Reset seed of the final evaluations (+ the run's seed) and of the random policy's."""
RESULTS_FILE = "results.jsonl"
TABLE_FILE = "results.md"
CURVES_FILE = "learning_curves.png"


class CompareSettings(Protocol):
    """What a comparison needs (``demostudio compare``'s config has these fields)."""

    env: str
    demos: tuple[Path, ...]
    algos: tuple[str, ...]
    seeds: int
    first_seed: int
    budget: int
    out: Path
    threshold: float | None
    eval_every: int
    eval_episodes: int
    final_eval_episodes: int
    jobs: int
    overrides: str
    device: str
    restart: bool


class RunSpec(NamedTuple):
    """One training run of a comparison (picklable, for worker processes)."""

    algo: str
    seed: int
    env: str
    demos: tuple[str, ...]
    budget: int
    eval_every: int
    eval_episodes: int
    final_eval_episodes: int
    overrides: dict[str, Any]
    run_dir: str
    device: str
    threshold: float
    resume: bool = False
    """Continue this run from its latest checkpoint (an interrupted run of the same plan)."""

    def planned(self) -> dict[str, Any]:
        """What the run folder's marker records: the plan, without how this invocation
        starts it."""
        return {k: v for k, v in self._asdict().items() if k != "resume"}


class RunSummary(NamedTuple):
    algo: str
    seed: int
    final_return: float
    """Mean return of the final checkpoint over ``final_eval_episodes`` fresh episodes."""
    steps_to_threshold: int | None
    """Env steps of the first evaluation >= threshold (None: never reached)."""
    wall_s: float
    env_steps: int
    updates: int
    curve: list[tuple[int, float]]
    """(env steps, evaluation mean return) of every evaluation during training."""
    run_dir: str

    def to_json(self) -> dict[str, Any]:
        return {**self._asdict(), "curve": [list(p) for p in self.curve]}

    @staticmethod
    def from_json(d: Any) -> RunSummary:
        """A summary from its JSON object; ValueError naming the first field of the wrong
        type (the file is results.jsonl: a hand-edited or damaged row must not become a
        traceback when the table is drawn)."""
        if not isinstance(d, dict):
            raise ValueError(f"expected a JSON object, got {type(d).__name__}")
        if set(d) != set(RunSummary._fields):
            raise ValueError(f"expected the fields {list(RunSummary._fields)}, got {sorted(d)}")
        for name, kinds in _SUMMARY_TYPES.items():
            value = d[name]
            if not isinstance(value, kinds) or isinstance(value, bool):
                want = " or ".join("null" if k is type(None) else k.__name__ for k in kinds)
                raise ValueError(f"{name}: expected {want}, got {value!r:.60}")
        curve = d["curve"]
        if not isinstance(curve, list) or not all(
            isinstance(p, list)
            and len(p) == 2
            and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in p)
            for p in curve
        ):
            raise ValueError(f"curve: expected [[env steps, return], ...], got {curve!r:.60}")
        return RunSummary(**{**d, "curve": [(int(s), float(r)) for s, r in curve]})


_SUMMARY_TYPES: dict[str, tuple[type, ...]] = {
    "algo": (str,),
    "seed": (int,),
    "final_return": (int, float),
    "steps_to_threshold": (int, type(None)),
    "wall_s": (int, float),
    "env_steps": (int,),
    "updates": (int,),
    "run_dir": (str,),
}
RUN_MARKER = "compare-run.json"
"""Written into each run folder a comparison makes, before it trains: only a folder with it
is continued or restarted when a rerun finds it unfinished."""


class DemoInfo(NamedTuple):
    paths: list[Path]
    mean_return: float


class Reference(NamedTuple):
    """The returns an agent is measured against: the demos' and a random policy's."""

    demos: float
    """Mean return of the demo episodes."""
    random: float
    """Mean return of the uniformly random policy on the final evaluation's seeds."""

    def share(self, agent: float) -> float:
        """``agent / demos``: the share of the demos' return reached (nan unless the demos'
        return is positive: a ratio of negative returns means nothing)."""
        return agent / self.demos if self.demos > 0 else math.nan

    def normalised(self, agent: float) -> float:
        """``(agent - random) / (demos - random)``: 0 is random, 1 the demos (nan when the
        demos do no better than random)."""
        gap = self.demos - self.random
        return (agent - self.random) / gap if gap > 0 else math.nan


class RandomPolicy:
    """Uniformly random actions from the env's own (seeded) action space."""

    def __init__(self, seed: int):
        self.seed = seed
        self._seeded = False

    def reset(self, env: Any, observation: Any, info: dict) -> None:
        if not self._seeded:
            env.action_space.seed(self.seed)
            self._seeded = True

    def act(self, env: Any, observation: Any) -> Any:
        return env.action_space.sample()

    def observe_reward(self, reward: float) -> None:
        pass


def random_return(env_id: str, episodes: int, seed: int) -> float:
    """Mean return of :class:`RandomPolicy` over ``episodes`` episodes seeded from ``seed``."""
    from agents.core.evaluate import run_episodes
    from demostudio.episode import make_env

    env = make_env(env_id)
    try:
        return run_episodes(env, RandomPolicy(seed), episodes, seed=seed).mean
    finally:
        env.close()


def demo_info(demos: Sequence[Path]) -> DemoInfo:
    paths = find_episodes(list(demos))
    if not paths:
        raise FileNotFoundError(
            f"--demos: expected episode files (*.h5) under {', '.join(map(str, demos))}, got none"
        )
    return DemoInfo(paths, float(np.mean([read_summary(p).total_return for p in paths])))


def default_threshold(env_id: str, demos: DemoInfo) -> float:
    """The env spec's reward threshold, else the demos' mean return."""
    from demostudio.episode import ensure_registered

    ensure_registered(env_id)
    import gymnasium as gym

    spec_threshold = gym.spec(env_id).reward_threshold
    return float(spec_threshold) if spec_threshold is not None else demos.mean_return


def parse_overrides(text: str, algos: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``'{"dqfd": {"pretrain_updates": 500}, "*": {"num_actors": 2}}'`` -> dict, checked:
    keys are algorithm names or ``*`` (every algorithm that has the field)."""
    try:
        data = json.loads(text or "{}")
    except json.JSONDecodeError as exc:
        raise ValueError(f"--overrides: expected JSON, got {text!r} ({exc})") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise ValueError(f'--overrides: expected {{"ALGO" or "*": {{FIELD: VALUE}}}}, got {text!r}')
    unknown = sorted(set(data) - set(algos) - {"*"})
    if unknown:
        raise ValueError(f"--overrides: expected keys among {[*algos, '*']}, got {unknown}")
    return data


def build_config(spec: RunSpec) -> Any:
    """The algorithm's config for one run: budget, seed, evaluation and demos set where the
    config has those fields, then ``*`` overrides (where the field exists), then the
    algorithm's own overrides (which must exist). An interrupted run continues with the
    config saved in its checkpoint and only those values set again."""
    from agents.registry import get_algorithm

    cls = get_algorithm(spec.algo).config_cls
    names = {f.name for f in dataclasses.fields(cls)}
    values: dict[str, Any] = {
        "env": spec.env,
        "seed": spec.seed,
        "run_dir": Path(spec.run_dir),
        "progress": False,
        "tensorboard": False,
        "device": spec.device,
    }
    if "total_env_steps" in names:  # learns from env interaction: evaluate on env steps
        values.update(
            total_env_steps=spec.budget,
            eval_every=spec.eval_every,
            eval_episodes=spec.eval_episodes,
            stop_when="off",  # every run of a comparison gets the same budget
        )
    if "demos" in names:
        values["demos"] = tuple(Path(p) for p in spec.demos)
    common = spec.overrides.get("*", {})
    values.update({k: v for k, v in common.items() if k in names})
    own = spec.overrides.get(spec.algo, {})
    bad = sorted(set(own) - names)
    if bad:
        raise ValueError(f"--overrides: {spec.algo} has no fields {bad} (see its --help)")
    values.update(own)
    for k, v in values.items():
        if isinstance(v, list):
            values[k] = tuple(v)
    cfg = cls(**values)
    if spec.resume:  # the saved config with what the plan sets: today's defaults do not leak in
        from agents.core.config import config_from_dict, config_to_dict
        from agents.core.resume import resumed_config

        given = config_to_dict(cfg)
        given = {k: given[k] for k in values}
        cfg = resumed_config(Path(spec.run_dir), cfg, given, lambda v: config_from_dict(cls, v))
    return cfg


def run_one(spec: RunSpec) -> RunSummary:
    """Train one algorithm/seed, then evaluate its final checkpoint on fresh episodes."""
    from agents.core.evaluate import run_episodes
    from agents.core.logger import read_metrics
    from agents.core.restore import restore_agent
    from agents.registry import get_algorithm

    entry = get_algorithm(spec.algo)
    cfg = build_config(spec)
    run_dir = Path(spec.run_dir)
    marker = run_dir / RUN_MARKER
    made = [p for p in (run_dir.parent, run_dir, marker) if not os.path.lexists(p)]
    run_dir.mkdir(parents=True, exist_ok=True)
    marker.write_text(json.dumps(spec.planned()) + "\n", encoding="utf-8")
    t0 = time.perf_counter()
    try:
        result = entry.train(cfg)
    except BaseException:
        if not os.path.lexists(run_dir / "metrics.jsonl"):  # the run did not start
            remove_made(made)
        raise
    wall = time.perf_counter() - t0
    agent = restore_agent(result.run_dir, "cpu", 0.0, spec.seed)
    env = agent.make_env()
    try:
        final = run_episodes(
            env, agent.controller, spec.final_eval_episodes, FINAL_EVAL_SEED + spec.seed
        )
    finally:
        env.close()
    curve = [
        (int(r["env_steps"]), float(r["eval_return"]))
        for r in read_metrics(result.run_dir)
        if r.get("kind") == "eval" and "eval_return" in r
    ]
    reached = [s for s, ret in curve if ret >= spec.threshold]
    return RunSummary(
        spec.algo,
        spec.seed,
        final.mean,
        min(reached) if reached else None,
        wall,
        result.env_steps,
        result.updates,
        curve,
        str(result.run_dir),
    )


def remove_made(made: Sequence[Path]) -> None:
    """Remove what this invocation made, newest first: files, and folders only when empty
    (nothing older, nothing another run wrote since)."""
    for p in reversed(made):
        try:
            if p.is_dir() and not p.is_symlink():
                p.rmdir()
            else:
                p.unlink()
        except OSError:
            pass


def check_demo_envs(cfg: CompareSettings, specs: Sequence[RunSpec], demos: DemoInfo) -> None:
    """Every run's config builds (its overrides exist) and the demos were recorded on the
    env of each run that learns from them: before OUT is made, not when that run starts."""
    from agents.core.config import DemoConfig
    from agents.core.demos import check_demo_env

    accepted = set()
    for spec in specs:
        run_cfg = build_config(spec)
        if isinstance(run_cfg, DemoConfig) and run_cfg.demos:
            accepted.add(run_cfg.demo_env_override)
    for accept in accepted:
        for path in demos.paths:
            check_demo_env(path, cfg.env, accept)


def read_results(out: Path) -> list[RunSummary]:
    """The finished runs in ``OUT/results.jsonl``, read as hostile input (a regular file of
    bounded size and line length, every row a run summary); ValueError names file and line."""
    path = out / RESULTS_FILE
    if not os.path.lexists(path):
        return []
    rows = []
    for n, row, error in read_json_lines(path, "a results file of a comparison"):
        if error is not None:
            raise error
        try:
            rows.append(RunSummary.from_json(row))
        except ValueError as exc:
            raise EpisodeError(path, f"line {n}", f"expected a run summary ({exc})") from None
    return rows


def check_run_folder(run_dir: Path, out: Path) -> None:
    """Before a rerun restarts ``run_dir`` (deleting its checkpoints): it must be a folder this
    comparison made (:data:`RUN_MARKER`), reached through no link, so that ``--out .`` never
    deletes the checkpoints of a ``train`` run in ``runs/``, nor a link anything outside."""
    for p in (out / "runs", run_dir, run_dir / "checkpoints", run_dir / RUN_MARKER,
              run_dir / "metrics.jsonl", run_dir / "tb"):  # fmt: skip
        if p.is_symlink():
            raise ValueError(
                f"{p}: expected a folder or file of this comparison, got a link (compare never "
                "deletes through a link)"
            )
    if not run_dir.exists():
        return
    if not run_dir.is_dir():
        raise ValueError(f"{run_dir}: expected a run folder of this comparison, got a file")
    used = (run_dir / "metrics.jsonl").exists() or any((run_dir / "checkpoints").glob("*.pt"))
    if used and not (run_dir / RUN_MARKER).is_file():
        raise ValueError(
            f"{run_dir}: expected a run folder made by `demostudio compare` (with {RUN_MARKER}), "
            "got a training run it did not make; compare restarts its unfinished runs by "
            "deleting their checkpoints, so choose another --out or move that run away"
        )


def continue_or_clear(spec: RunSpec, restart: bool) -> RunSpec:
    """An interrupted run of the same plan (its marker records this spec) continues from its
    latest checkpoint where the algorithm resumes, so a closed terminal costs at most the
    minutes since that checkpoint; any other unfinished run, or every one with ``restart``,
    starts again with its checkpoints, metrics and logs cleared."""
    from agents.core.checkpoint import latest_checkpoint, replay_path
    from agents.core.config import InteractConfig
    from agents.registry import get_algorithm

    run_dir = Path(spec.run_dir)
    marker = run_dir / RUN_MARKER
    resumable = issubclass(get_algorithm(spec.algo).config_cls, InteractConfig)
    if resumable and not restart and marker.is_file() and latest_checkpoint(run_dir) is not None:
        try:
            same = json.loads(marker.read_text(encoding="utf-8")) == json.loads(
                json.dumps(spec.planned())
            )
        except (OSError, UnicodeDecodeError, ValueError):
            same = False
        if same:
            return spec._replace(resume=True)
    for leftover in (run_dir / "checkpoints").glob("*.pt"):
        leftover.unlink()
    replay_path(run_dir).unlink(missing_ok=True)
    (run_dir / "metrics.jsonl").unlink(missing_ok=True)
    shutil.rmtree(run_dir / "tb", ignore_errors=True)  # its logs go with it
    return spec


def plan_runs(cfg: CompareSettings, threshold: float) -> list[RunSpec]:
    from agents.registry import algorithm_names

    known = algorithm_names()
    bad = [a for a in cfg.algos if a not in known]
    if bad:
        raise ValueError(f"--algos: expected names among {known}, got {bad}")
    overrides = parse_overrides(cfg.overrides, cfg.algos)
    return [
        RunSpec(
            algo,
            seed,
            cfg.env,
            tuple(str(p) for p in cfg.demos),
            cfg.budget,
            cfg.eval_every,
            cfg.eval_episodes,
            cfg.final_eval_episodes,
            overrides,
            str(cfg.out / "runs" / f"{algo}-{env_folder_name(cfg.env)}-s{seed}"),
            cfg.device,
            threshold,
        )
        for seed in range(cfg.first_seed, cfg.first_seed + cfg.seeds)  # seed-major: a partial
        for algo in cfg.algos  # comparison has every algorithm
    ]


def time_left(walls: dict[str, list[float]], left: Sequence[str], jobs: int) -> str:
    """``", about 3 min left"``: each run still to do costs its algorithm's mean wall time
    so far (else the mean of every run so far), ``jobs`` at a time; empty when none is left."""
    if not left:
        return ""
    every = [w for ws in walls.values() for w in ws]
    mean = {a: sum(ws) / len(ws) for a, ws in walls.items()}
    seconds = sum(mean.get(a, sum(every) / len(every)) for a in left) / max(1, jobs)
    return f", about {_duration(seconds)} left"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def run_comparison(
    cfg: CompareSettings, report: Callable[[str], None] = print
) -> tuple[list[RunSummary], Path, Path]:
    """Run every (algorithm, seed) not already in OUT/results.jsonl (``jobs`` at a time),
    then write the markdown table and the learning-curve PNG; returns (summaries, table,
    png)."""
    counts = {"seeds": cfg.seeds, "budget": cfg.budget, "eval_episodes": cfg.eval_episodes,
              "final_eval_episodes": cfg.final_eval_episodes, "jobs": cfg.jobs}  # fmt: skip
    for name, value in counts.items():
        if value < 1:
            raise ValueError(f"--{name.replace('_', '-')}: expected >= 1, got {value}")
    if not cfg.algos:
        raise ValueError("--algos: expected at least one algorithm, got none")
    demos = demo_info(cfg.demos)
    threshold = cfg.threshold if cfg.threshold is not None else default_threshold(cfg.env, demos)
    if cfg.out.exists() and not cfg.out.is_dir():
        raise ValueError(f"--out {cfg.out}: expected a folder, got a file")
    plan = plan_runs(cfg, threshold)
    check_demo_envs(cfg, plan, demos)
    done = {(r.algo, r.seed) for r in read_results(cfg.out)}
    todo = [s for s in plan if (s.algo, s.seed) not in done]
    for s in todo:
        check_run_folder(Path(s.run_dir), cfg.out)
    made = [p for p in (cfg.out,) if not os.path.lexists(p)]
    cfg.out.mkdir(parents=True, exist_ok=True)
    todo = [continue_or_clear(s, cfg.restart) for s in todo]
    resumed = sum(s.resume for s in todo)
    verb = "s continue" if resumed > 1 else " continues"
    report(
        f"compare {cfg.env}: {len(todo)} runs to do ({len(done)} already done), "
        f"{_episodes(len(demos.paths))} (mean return {fmt_return(demos.mean_return)}), "
        f"threshold {threshold:g}"
        + (f"; {resumed} interrupted run{verb} from its latest checkpoint" if resumed else "")
    )

    walls: dict[str, list[float]] = {}
    left = [s.algo for s in todo]

    def record(summary: RunSummary) -> None:
        with (cfg.out / RESULTS_FILE).open("a", encoding="utf-8") as f:
            f.write(json.dumps(summary.to_json()) + "\n")
        hit = summary.steps_to_threshold
        walls.setdefault(summary.algo, []).append(summary.wall_s)
        left.remove(summary.algo)
        report(
            f"  {summary.algo} seed {summary.seed}: final "
            f"{fmt_return(summary.final_return, abs(demos.mean_return))}, "
            f"threshold at {hit if hit is not None else '-'} env steps, {summary.wall_s:.0f} s"
            f" ({len(todo) - len(left)} of {len(todo)} done{time_left(walls, left, cfg.jobs)})"
        )

    try:
        with stop_signals():
            _run_all(todo, cfg.jobs, record)
    except BaseException as exc:
        remove_made(made)  # OUT, when this comparison made it and nothing is in it
        if isinstance(exc, KeyboardInterrupt):
            kept = len(read_results(cfg.out)) if cfg.out.is_dir() else 0
            runs = f"{kept} finished run{'' if kept == 1 else 's'}"
            report(f"compare interrupted: {runs} kept in {cfg.out / RESULTS_FILE}; the same "
                   "command continues with the others")  # fmt: skip
        raise
    summaries = [r for r in read_results(cfg.out) if r.algo in cfg.algos]
    episodes = cfg.final_eval_episodes * cfg.seeds
    ref = Reference(demos.mean_return, random_return(cfg.env, episodes, FINAL_EVAL_SEED))
    shown = fmt_return(ref.random, max(abs(ref.random), abs(ref.demos)))
    report(f"random policy: mean return {shown} over {episodes} episodes")
    table = write_table(cfg, summaries, demos, threshold, ref)
    png = plot_comparison(cfg, summaries, demos, threshold, ref)
    return summaries, table, png


def _run_all(todo: Sequence[RunSpec], jobs: int, record: Callable[[RunSummary], None]) -> None:
    """Train and record each run, ``jobs`` at a time in processes of their own; a stop here
    stops their runs too (each saved, interrupted) before the pool ends."""
    if jobs == 1 or len(todo) <= 1:
        for spec in todo:
            check_stop()  # a stop that came as the last run saved its end
            record(run_one(spec))
        return
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        try:
            for fut in as_completed([pool.submit(run_one, spec) for spec in todo]):
                record(fut.result())
        except KeyboardInterrupt:
            pool.shutdown(wait=False, cancel_futures=True)  # no run starts any more
            stop_children()
            raise


def _episodes(n: int) -> str:
    return f"{n} demo episode{'' if n == 1 else 's'}"


def _scale(summaries: Sequence[RunSummary]) -> float:
    """The largest final return's magnitude: the precision of a table (:func:`fmt_return`)."""
    finite = [abs(r.final_return) for r in summaries if math.isfinite(r.final_return)]
    return max(finite, default=0.0)


def _ratio(x: float) -> str:
    return "-" if not math.isfinite(x) else f"{x:.2f}"


def markdown_table(
    summaries: Sequence[RunSummary],
    algos: Sequence[str],
    threshold: float,
    ref: Reference | None = None,
) -> str:
    """One row per algorithm: final return mean ± std over seeds, env steps to the
    threshold (median of the seeds that reached it, and how many did), wall time; with
    ``ref`` also the share of the demos' return reached and the human-normalised score, of
    the mean final return."""
    extra = " share of demo return | human-normalised |" if ref is not None else ""
    lines = [
        f"| algorithm | seeds | final eval return (mean ± std) | env steps to >= {threshold:g} "
        f"(median, reached) | wall time s (mean) |{extra}",
        "| --- | --- | --- | --- | --- |" + (" --- | --- |" if ref is not None else ""),
    ]
    scale = _scale(summaries)
    for algo in algos:
        rows = [r for r in summaries if r.algo == algo]
        if not rows:
            continue
        finals = np.array([r.final_return for r in rows])
        hits = [r.steps_to_threshold for r in rows if r.steps_to_threshold is not None]
        median = str(int(np.median(hits))) if hits else "-"
        steps = f"{median} ({len(hits)}/{len(rows)})"
        row = (
            f"| {algo} | {len(rows)} | {fmt_return(finals.mean(), scale)} ± "
            f"{fmt_return(finals.std(), scale)} | {steps} "
            f"| {np.mean([r.wall_s for r in rows]):.0f} |"
        )
        if ref is not None:
            share, score = ref.share(finals.mean()), ref.normalised(finals.mean())
            row += f" {_ratio(share)} | {_ratio(score)} |"
        lines.append(row)
    return "\n".join(lines) + "\n"


def write_table(
    cfg: CompareSettings,
    summaries: Sequence[RunSummary],
    demos: DemoInfo,
    threshold: float,
    ref: Reference | None = None,
) -> Path:
    against = ""
    if ref is not None:
        against = (
            f"The agent against the person: share of demo return = final / demos (only for a "
            f"positive demo return); human-normalised = (final - random) / (demos - random), "
            f"random policy mean return {fmt_return(ref.random, abs(ref.demos))} on the final "
            "evaluation's seeds.\n\n"
        )
    head = (
        f"# {cfg.env}: {', '.join(cfg.algos)}\n\n"
        f"{_episodes(len(demos.paths))} (mean return {fmt_return(demos.mean_return)}) from "
        f"{', '.join(map(str, cfg.demos))}; budget {cfg.budget} env steps per run; "
        f"final return over {cfg.final_eval_episodes} fresh episodes of the final checkpoint; "
        f"bc learns from the demos only (0 env steps).\n\n{against}"
    )
    seeds = ["", "| algorithm | seed | final | steps to threshold | env steps | updates | wall s |",
             "| --- | --- | --- | --- | --- | --- | --- |"]  # fmt: skip
    scale = _scale(summaries)
    for r in sorted(summaries, key=lambda r: (cfg.algos.index(r.algo), r.seed)):
        hit = "-" if r.steps_to_threshold is None else str(r.steps_to_threshold)
        seeds.append(
            f"| {r.algo} | {r.seed} | {fmt_return(r.final_return, scale)} | {hit} "
            f"| {r.env_steps} "
            f"| {r.updates} | {r.wall_s:.0f} |"
        )
    path = cfg.out / TABLE_FILE
    path.write_text(
        head + markdown_table(summaries, cfg.algos, threshold, ref) + "\n".join(seeds) + "\n",
        encoding="utf-8",
    )
    return path


def plot_comparison(
    cfg: CompareSettings,
    summaries: Sequence[RunSummary],
    demos: DemoInfo,
    threshold: float,
    ref: Reference | None = None,
) -> Path:
    """Mean evaluation return over seeds per algorithm (band: min to max), on a common grid
    of env steps; algorithms that use no env steps (bc) as a dashed level; the demos'
    returns (mean and band, one per player) and the random policy's level."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10.5, 6), dpi=100, layout="constrained")
    grid = np.linspace(0, cfg.budget, 41)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, algo in enumerate(cfg.algos):
        rows = [r for r in summaries if r.algo == algo and r.curve]
        if not rows:
            continue
        color = colors[i % len(colors)]
        if all(r.env_steps == 0 for r in rows):
            level = float(np.mean([r.final_return for r in rows]))
            ax.axhline(level, color=color, ls="--", label=f"{algo} (no env steps)")
            continue
        curves = []
        for r in rows:
            s = np.array([p[0] for p in r.curve], float)
            v = np.array([p[1] for p in r.curve], float)
            c = np.interp(grid, s, v)  # after the run's last evaluation: held at it
            c[grid < s.min()] = np.nan  # before its first evaluation: nothing to show
            curves.append(c)
        arr = np.array(curves)
        shown = ~np.all(np.isnan(arr), axis=0)
        g, arr = grid[shown], arr[:, shown]
        ax.plot(
            g,
            np.nanmean(arr, 0),
            color=color,
            label=f"{algo} ({len(rows)} seed{'' if len(rows) == 1 else 's'})",
            **line_style(i, len(cfg.algos), len(g)),  # equal curves (ppo, rnd-ppo) both show
        )
        if len(rows) > 1:
            ax.fill_between(g, np.nanmin(arr, 0), np.nanmax(arr, 0), color=color, alpha=0.15)
    ax.axhline(threshold, color="gray", ls=":", lw=1, label=f"threshold {threshold:g}")
    groups = demo_returns(demos.paths)
    draw_demo_band(ax, groups, ["black", *colors[len(cfg.algos) :]])
    if ref is not None:
        shown = fmt_return(ref.random, max(abs(ref.random), abs(ref.demos)))
        ax.axhline(ref.random, color="gray", ls="-.", lw=1, label=f"random {shown}")
    ax.set_xlabel("env steps")
    ax.set_ylabel("evaluation return")
    ax.set_title(f"{cfg.env}, {_episodes(len(demos.paths))}")
    ax.grid(alpha=0.3)
    # under the axes: with every algorithm, the demos and the references no corner of the
    # plot is free for a dozen entries, and beside it they take half the width
    legend_below(fig, ax)
    path = cfg.out / CURVES_FILE
    fig.savefig(path)
    plt.close(fig)
    return path


__all__ = [
    "FINAL_EVAL_SEED",
    "CompareSettings",
    "RandomPolicy",
    "Reference",
    "RunSpec",
    "RunSummary",
    "build_config",
    "check_run_folder",
    "markdown_table",
    "parse_overrides",
    "plan_runs",
    "plot_comparison",
    "random_return",
    "read_results",
    "run_comparison",
    "run_one",
]

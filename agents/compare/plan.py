"""A comparison's plan and its run folders: the runs of every (algorithm, seed), each run's
config (overrides checked; an interrupted run continues from its saved config), the demos'
env checked before OUT is made, and an unfinished run folder continued or cleared (only one
this comparison made, never through a link)."""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.compare.records import RUN_MARKER, CompareSettings, DemoInfo, RunSpec
from demostudio.episode import env_folder_name


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


__all__ = [
    "build_config",
    "check_demo_envs",
    "check_run_folder",
    "continue_or_clear",
    "parse_overrides",
    "plan_runs",
    "remove_made",
]

"""Which run a run folder holds before training writes to it: a fresh folder, a run to
resume (its checkpoint), or one that is refused. A run's logs (metrics.jsonl, TensorBoard's
tb/) are appended to only by the run that wrote them, resumed: a folder whose run stopped
before its first checkpoint (killed, the power cut) is refused rather than mixed with a second
run's rows (env steps 1000, 2000, then 1000 again)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import torch

from agents.core.agent import Agent
from agents.core.checkpoint import CheckpointError, latest_checkpoint, load_checkpoint
from agents.core.logger import METRICS_FILE, RUN_FILES
from demostudio.episode import env_folder_name


def default_run_dir(algo: str, cfg: Any) -> Path:
    return Path("runs") / f"{algo}-{env_folder_name(cfg.env)}-s{cfg.seed}"


def earlier_logs(run_dir: Path) -> str | None:
    """The logs an earlier run left in ``run_dir`` (``metrics.jsonl``, ``tb/``), or None."""
    found = []
    metrics = run_dir / METRICS_FILE
    if metrics.is_file() and metrics.stat().st_size > 0:
        found.append(METRICS_FILE)
    tb = run_dir / "tb"
    if tb.is_dir() and not tb.is_symlink() and any(os.scandir(tb)):
        found.append("tb/")
    return " and ".join(found) or None


def _fresh_hint(agent: Agent) -> str:
    hint = "another --run-dir"
    if hasattr(agent.cfg, "resume"):
        hint = ("leave out --no-resume" if agent.resume_by_default else "--resume") + " or " + hint
    return hint


def discard_run(run_dir: Path, created: bool) -> None:
    """After a run failed before its first checkpoint: nothing in its folder is of use (the
    error is on the terminal), and its config.json and logs would make the folder look like a
    run (a rerun would refuse it). The folder goes when the run made it, else the run's own
    files (there were no logs before it: :func:`open_run` refuses such a folder)."""
    if created:
        shutil.rmtree(run_dir, ignore_errors=True)
        return
    for name in RUN_FILES:
        (run_dir / name).unlink(missing_ok=True)
    shutil.rmtree(run_dir / "tb", ignore_errors=True)


def open_run(agent: Agent, run_dir: Path, device: torch.device) -> dict | None:
    """The checkpoint payload to resume from (None for a fresh run); CheckpointError names
    the folder when it holds checkpoints and no resume was asked for, none when one was, or
    the logs of a run that saved no checkpoint."""
    cfg = agent.cfg
    previous = latest_checkpoint(run_dir)
    resume = getattr(cfg, "resume", False)
    if previous is None and (not resume or agent.resume_by_default):
        logs = earlier_logs(run_dir)
        if logs is not None:
            raise CheckpointError(
                run_dir,
                f"expected a fresh run folder, got the {logs} of a run that saved no checkpoint "
                "(nothing to resume; a second run would be mixed into its logs): delete the "
                "folder or pass another --run-dir",
            )
    if not resume:
        if previous is not None:
            hint = _fresh_hint(agent)
            raise CheckpointError(
                run_dir, f"expected a fresh run folder, got one with checkpoints (pass {hint})"
            )
        return None
    if previous is None:
        if agent.resume_by_default:
            return None  # automatic resume: nothing to resume yet, a fresh run
        raise CheckpointError(run_dir, "--resume: expected a run folder with checkpoints, got none")
    payload = load_checkpoint(previous, map_location=device)
    if payload["algo"] != agent.name or payload["config"].get("env") != cfg.env:
        raise CheckpointError(
            previous,
            f"--resume: expected a {agent.name} run on {cfg.env}, got a {payload['algo']} run "
            f"on {payload['config'].get('env')}",
        )
    return payload


__all__ = ["default_run_dir", "discard_run", "earlier_logs", "open_run"]

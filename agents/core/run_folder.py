"""A run folder: its default name, the logs an earlier run left in it and what a failed run
leaves of it (which run it holds, fresh or resumed, is :func:`agents.core.resume.open_run`'s
to say). A run's logs (metrics.jsonl, TensorBoard's
tb/) are appended to only by the run that wrote them, resumed: a folder whose run stopped
before its first checkpoint (killed, the power cut) is refused rather than mixed with a second
run's rows (env steps 1000, 2000, then 1000 again)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from agents.core.agent import Agent
from agents.core.config import InteractConfig
from agents.core.logger import METRICS_FILE, RUN_FILES
from demostudio.episode import env_folder_name


def default_run_dir(algo: str, env_id: str, seed: int) -> Path:
    """``runs/<algo>-<env>-s<seed>``: the folder of a run not given ``--run-dir``."""
    return Path("runs") / f"{algo}-{env_folder_name(env_id)}-s{seed}"


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


def fresh_hint(agent: Agent) -> str:
    hint = "another --run-dir"
    if isinstance(agent.cfg, InteractConfig):
        hint = ("leave out --no-resume" if agent.resume_by_default else "--resume") + " or " + hint
    return hint


def discard_run(run_dir: Path, created: bool) -> None:
    """After a run failed before its first checkpoint: nothing in its folder is of use (the
    error is on the terminal), and its config.json and logs would make the folder look like a
    run (a rerun would refuse it). The folder goes when the run made it, else the run's own
    files (there were no logs before it: :func:`agents.core.resume.open_run` refuses such a
    folder)."""
    if created:
        shutil.rmtree(run_dir, ignore_errors=True)
        return
    for name in RUN_FILES:
        (run_dir / name).unlink(missing_ok=True)
    shutil.rmtree(run_dir / "tb", ignore_errors=True)


__all__ = ["default_run_dir", "discard_run", "earlier_logs", "fresh_hint"]

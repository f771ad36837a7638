"""``--resume``, in one place: the config a resumed run continues with (the saved one with
this command line's flags changed: :func:`resumed_config`, which the CLI calls), which
checkpoint a run folder resumes from (:func:`open_run`), the networks built against the saved
weights and the error naming the flags that do not fit them (:func:`resume_mismatch`), the
replays restored (:func:`restore_replays`) and the note the run logs (:func:`resume_note`).
The checkpoint files themselves are :mod:`agents.core.checkpoint`'s."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import torch

from agents.core.agent import Agent
from agents.core.checkpoint import (
    CheckpointError,
    build_checked,
    latest_checkpoint,
    load_checkpoint,
    load_replays,
    replay_path,
)
from agents.core.config import InteractConfig, config_to_dict
from agents.core.context import EnvInfo, RunContext
from agents.core.learner import Learner
from agents.core.run_folder import earlier_logs, fresh_hint

RESUME_FREE = {"resume", "total_env_steps", "progress", "tensorboard", "device", "run_dir",
               "actor_procs", "ray_address", "ray_auth", "checkpoint_minutes"}  # fmt: skip
"""Fields that may change between a run and its resumption without comment."""


def resumed_config(
    run_dir: Path,
    cfg: Any,
    given: Mapping[str, Any],
    make: Callable[[dict[str, Any]], Any],
    fresh_ok: bool = False,
) -> Any:
    """``--resume`` continues the run as it was configured: the config saved in its last
    checkpoint (``make`` builds the config from values), with only the flags ``given`` on
    this command line changed. A folder without checkpoints is an error here, before the
    flags are checked as a fresh run's (a resume needs no --demos), unless ``fresh_ok`` (an
    algorithm that resumes by default starts afresh: ``cfg`` is returned)."""
    found = latest_checkpoint(run_dir)
    if found is None:
        if fresh_ok:
            return cfg  # nothing to resume yet: a fresh run
        raise CheckpointError(run_dir, "--resume: expected a run folder with checkpoints, got none")
    saved = load_checkpoint(found)["config"]
    cfg = make({**saved, **given, "run_dir": run_dir, "resume": True})
    try:
        cfg.validate()
    except ValueError as exc:  # a value from the saved config, not this command line
        flag = str(exc).split(":", 1)[0].split()[0]
        if flag[2:].replace("-", "_") not in given:
            raise CheckpointError(found, f"its saved config: {exc}") from None
        raise
    return cfg


def open_run(agent: Agent, run_dir: Path, device: torch.device) -> dict | None:
    """The checkpoint payload to resume from (None for a fresh run); CheckpointError names
    the folder when it holds checkpoints and no resume was asked for, none when one was, or
    the logs of a run that saved no checkpoint."""
    cfg = agent.cfg
    previous = latest_checkpoint(run_dir)
    resume = isinstance(cfg, InteractConfig) and cfg.resume
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
            hint = fresh_hint(agent)
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


def changed_fields(saved: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """The config fields whose values differ from the saved run's (the free ones left out)."""
    return [k for k, v in now.items() if k not in RESUME_FREE and k in saved and saved[k] != v]


def config_changes(saved: dict, cfg: Any) -> list[str]:
    """``field saved -> now`` for each config field that differs from the resumed run's."""
    now = config_to_dict(cfg)
    return [f"{k} {saved[k]!r} -> {now[k]!r}" for k in changed_fields(saved, now)]


def _shown(name: str, value: Any) -> str:
    """``--hidden 64``, ``--no-recurrent``: a config value as the flag that gives it."""
    flag = "--" + name.replace("_", "-")
    if isinstance(value, bool):
        return flag if value else "--no-" + flag[2:]
    if isinstance(value, list):
        value = " ".join(map(str, value))
    return f"{flag} {value}"


def resume_mismatch(agent: Agent, run_dir: Path, payload: dict, exc: Exception) -> Exception:
    """The error for weights that do not fit this config on --resume: the flags whose values
    differ from the saved run's (the likely cause: ``--resume --hidden 128`` on a run trained
    with 64), not the tensor that did not fit; ``exc`` when no flag differs."""
    saved, now = payload["config"], config_to_dict(agent.cfg)
    changed = changed_fields(saved, now)
    if not changed:
        return exc
    was = ", ".join(_shown(k, saved[k]) for k in changed)
    given = ", ".join(_shown(k, now[k]) for k in changed)
    found = (
        f"found the run in {run_dir} and tried to resume it ({agent.name} resumes a run "
        f"folder with checkpoints unless --no-resume is given), but it was"
        if agent.resume_by_default
        else f"the run in {run_dir} was"
    )
    return ValueError(
        f"--resume: {found} trained with {was} (given {given}): drop the flag or use another "
        f"--run-dir"
    )


def build_networks(
    agent: Agent, info: EnvInfo, run_dir: Path, payload: dict | None
) -> dict[str, torch.nn.Module]:
    """The agent's networks; resumed, their shapes checked against the saved weights before
    anything is allocated."""
    if payload is None:
        return agent.build_networks(info)
    try:
        return dict(build_checked(payload["path"], lambda: agent.build_networks(info),
                                  payload["networks"]))  # fmt: skip
    except CheckpointError as exc:
        raise resume_mismatch(agent, run_dir, payload, exc) from None


def load_learner(agent: Agent, learner: Learner, run_dir: Path, payload: dict) -> None:
    """The saved weights, target copies and optimizer state into ``learner``."""
    try:
        learner.load_state_dict(payload)
    except (KeyError, RuntimeError, ValueError) as exc:
        raise resume_mismatch(
            agent, run_dir, payload,
            CheckpointError(payload["path"],
                            f"--resume: expected weights matching this config, got {exc}"),
        ) from None  # fmt: skip


def restore_replays(ctx: RunContext, env_steps: int, length: int) -> str:
    """Load checkpoints/replay.npz into the persistent buffers when it belongs to the
    checkpoint being resumed (same env steps, same sequence ``length``); returns what was
    done."""
    saved = load_replays(ctx.run_dir)
    if saved is None:
        return "no saved replay (run without --save-replay): the replay refills"
    saved_steps, arrays = saved
    if saved_steps != env_steps:
        return (
            f"saved replay is from env step {saved_steps}, the checkpoint from {env_steps}: "
            "the replay refills"
        )
    loaded = []
    for buf in ctx.mix.buffers if ctx.mix else []:
        state = arrays.get(buf.name)
        if not buf.persistent or state is None:
            continue
        saved_length = state["action"].shape[1] if "action" in state else length
        if saved_length != length:
            return (
                f"saved {buf.name} holds sequences of {saved_length} steps, this run uses "
                f"{length}: the replay refills"
            )
        buf.load_state_arrays(state, str(replay_path(ctx.run_dir)))
        loaded.append(f"{buf.name} {len(buf)} sequences")
    return "restored " + ", ".join(loaded)


def resume_note(ctx: RunContext, agent: Agent, payload: dict) -> str:
    """Once the run's parts are built: the replays restored and the agent's own state loaded;
    returns the note the run logs (what was restored, the config fields changed)."""
    note = restore_replays(ctx, ctx.counters.env_steps, agent.cfg.sequence_length)
    changes = config_changes(payload["config"], agent.cfg)
    if changes:
        note += "; config changed from the saved run: " + ", ".join(changes)
    agent.load_state_dict(payload.get("agent_state") or {})
    return note


__all__ = [
    "RESUME_FREE",
    "build_networks",
    "config_changes",
    "load_learner",
    "open_run",
    "restore_replays",
    "resume_mismatch",
    "resume_note",
    "resumed_config",
]

"""Checkpoints: the agent's name, config, network specs and weights, targets, optimizer,
counters, agent state (a plain dict) and ``interrupted`` (a bool: Ctrl-C stopped the run
there), written atomically (temp file, fsync, rename, so a kill at any moment leaves the
previous file whole); loaded with
``torch.load(weights_only=True)`` (nothing is unpickled).

A checkpoint is read as hostile input: only a regular file is opened (a FIFO named
``final.pt`` would block) and what is read from it is checked before any of it is used
(:mod:`agents.core.checkpoint_checks`).

``--resume`` continues from the checkpoint with the most env steps (then updates), not
from ``final.pt`` by preference: a resumed run killed after its periodic checkpoints
continues from them. Checkpoints of the previous format (one ``network``/``target`` pair
of a Q network) are read as the current one.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.core.atomic_file import atomic_write
from agents.core.checkpoint_checks import (
    CHECKPOINT_FORMAT,
    CHECKPOINT_VERSION,
    CheckpointError,
    build_checked,
    check_format,
    check_values,
    check_weights,
    load_archive,
    quiet_load,
)
from demostudio.episode.hostile import not_a_regular_file

CHECKPOINT_DIR = "checkpoints"
FINAL_NAME = "final.pt"
REPLAY_NAME = "replay.npz"
_PERIODIC = re.compile(r"^step-(\d+)\.pt$")


def save_checkpoint(path: Path, payload: dict[str, Any]) -> Path:
    return atomic_write(path, lambda f: torch.save(payload, f))


def periodic_path(run_dir: Path, env_steps: int) -> Path:
    return run_dir / CHECKPOINT_DIR / f"step-{env_steps:010d}.pt"


def prune_checkpoints(run_dir: Path, keep: int) -> None:
    """Delete all but the newest ``keep`` periodic checkpoints."""
    found = sorted(
        p for p in (run_dir / CHECKPOINT_DIR).glob("step-*.pt") if _PERIODIC.match(p.name)
    )
    for old in found[: max(0, len(found) - keep)]:
        old.unlink(missing_ok=True)


def _progress(path: Path) -> tuple[int, int] | None:
    """``(env steps, updates)`` of a checkpoint, or None if it cannot be read."""
    if not_a_regular_file(path, "a checkpoint") is not None:
        return None
    try:
        payload = quiet_load(path, "cpu", mmap=True)
        counters = payload["counters"]
        return int(counters["env_steps"]), int(counters.get("updates", 0))
    except Exception:  # a damaged or foreign file is not a candidate
        return None


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The checkpoint with the most env steps (then updates; ``final.pt`` on a tie) among
    ``checkpoints/*.pt``; unreadable files are passed over (the newest is returned when
    none can be read, so that loading it reports why)."""
    folder = Path(run_dir) / CHECKPOINT_DIR
    found = sorted(folder.glob("*.pt")) if folder.is_dir() else []
    best, best_key = None, None
    for p in found:
        progress = _progress(p)
        if progress is None:
            continue
        key = (*progress, p.name == FINAL_NAME)
        if best_key is None or key > best_key:
            best, best_key = p, key
    if best is None and found:
        return max(found, key=lambda p: p.lstat().st_mtime)  # a dangling link too
    return best


def replay_path(run_dir: Path) -> Path:
    """Where a run's saved replay lives (one file, rewritten with every checkpoint)."""
    return run_dir / CHECKPOINT_DIR / REPLAY_NAME


def save_replays(run_dir: Path, env_steps: int, buffers: dict[str, dict[str, np.ndarray]]) -> Path:
    """Write the buffers' arrays (``PrioritizedSequenceReplay.state_arrays``) to
    ``checkpoints/replay.npz`` atomically, tagged with the env steps of their checkpoint."""
    path = replay_path(run_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {"env_steps": np.array(env_steps, np.int64)}
    for i, (name, state) in enumerate(buffers.items()):
        arrays[f"b{i}.name"] = np.frombuffer(name.encode("utf-8"), np.uint8)
        arrays.update({f"b{i}.{k}": v for k, v in state.items()})
    return atomic_write(path, lambda f: np.savez(f, **arrays))


def load_replays(run_dir: Path) -> tuple[int, dict[str, dict[str, np.ndarray]]] | None:
    """``(env_steps, {buffer name: arrays})`` from ``checkpoints/replay.npz``, or None when
    there is none. Read with ``allow_pickle=False``."""
    path = replay_path(run_dir)
    if not os.path.lexists(path):
        return None
    problem = not_a_regular_file(path, "a DemoStudio replay file")
    if problem is not None:
        raise CheckpointError(path, problem)
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        env_steps = int(arrays.pop("env_steps"))
        prefixes = sorted({k.split(".", 1)[0] for k in arrays})
        out: dict[str, dict[str, np.ndarray]] = {}
        for pre in prefixes:
            name = arrays[f"{pre}.name"].tobytes().decode("utf-8")
            out[name] = {
                k[len(pre) + 1 :]: v
                for k, v in arrays.items()
                if k.startswith(pre + ".") and k != f"{pre}.name"
            }
    except Exception as exc:  # zip, npy and key errors of a damaged or foreign file
        raise CheckpointError(path, f"expected a DemoStudio replay file, got {exc}") from None
    return env_steps, out


REQUIRED_KEYS = ("algo", "config", "counters")
LEGACY_HEAD = {"bc": "logits"}
"""Head name of a previous-format checkpoint's dueling head, per algorithm (else ``q``)."""


def upgrade_legacy(payload: dict[str, Any]) -> dict[str, Any]:
    """A previous-format checkpoint (``network``, ``target``: one RecurrentQNetwork) as the
    current format (``network_specs``, ``networks``, ``targets``); KeyError/TypeError/ValueError
    when it lacks what that needs."""
    from agents.core.networks import legacy_state_dict

    cfg = payload["config"]
    head = LEGACY_HEAD.get(str(payload["algo"]), "q")
    spec = {
        "obs_spec": payload["obs_spec"],
        "num_actions": int(payload["num_actions"]),
        "hidden": int(cfg["hidden"]),
        "lstm": int(cfg["lstm"]),
        "recurrent": bool(cfg.get("recurrent", True)),
        "heads": {head: {"kind": "dueling_q", "atoms": 0}},
    }
    out = dict(payload)
    out["network_specs"] = {"main": spec}
    out["networks"] = {"main": legacy_state_dict(payload["network"], head)}
    out["targets"] = (
        {"main": legacy_state_dict(payload["target"], head)} if "target" in payload else {}
    )
    out.setdefault("updates", int(payload["counters"].get("updates", 0)))
    out["agent_state"] = payload.get("algo_state") or {}
    return out


def load_checkpoint(
    path: str | os.PathLike, map_location: str | torch.device = "cpu"
) -> dict[str, Any]:
    """Load a checkpoint file, or the latest one of a run folder."""
    p = Path(path)
    if p.is_dir() and p.suffix != ".pt":  # a folder named *.pt is refused below
        found = latest_checkpoint(p)
        if found is None:
            raise CheckpointError(
                p,
                f"expected a checkpoint file or a run folder with {CHECKPOINT_DIR}/*.pt, got none",
            )
        p = found
    problem = not_a_regular_file(p, "a checkpoint file")
    if problem is not None:
        raise CheckpointError(p, problem)
    payload = load_archive(p, map_location)
    if isinstance(payload, dict):
        check_format(p, payload)
    if not isinstance(payload, dict) or any(k not in payload for k in REQUIRED_KEYS):
        missing = [k for k in REQUIRED_KEYS if not isinstance(payload, dict) or k not in payload]
        raise CheckpointError(
            p, f"expected checkpoint keys {list(REQUIRED_KEYS)}, missing {missing}"
        )
    if "network_specs" not in payload:
        try:
            payload = upgrade_legacy(payload)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise CheckpointError(
                p,
                f"expected network_specs and networks (or a previous-format network), "
                f"got none ({exc!r} missing or malformed)",
            ) from None
    for key in ("networks", "network_specs", "counters", "config"):
        if not isinstance(payload.get(key), dict):
            raise CheckpointError(
                p, f"{key}: expected a dict, got {type(payload.get(key)).__name__}"
            )
    check_values(p, payload)
    payload["path"] = str(p)
    return payload


__all__ = [
    "CHECKPOINT_FORMAT",
    "CHECKPOINT_VERSION",
    "CheckpointError",
    "atomic_write",
    "build_checked",
    "check_weights",
    "latest_checkpoint",
    "load_checkpoint",
    "load_replays",
    "periodic_path",
    "prune_checkpoints",
    "replay_path",
    "save_checkpoint",
    "save_replays",
    "upgrade_legacy",
]

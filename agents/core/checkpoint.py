"""Checkpoints: network, target, optimizer, counters and config (a plain dict), written
atomically; loaded with ``torch.load(weights_only=True)`` (nothing is unpickled)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import torch

CHECKPOINT_DIR = "checkpoints"
FINAL_NAME = "final.pt"
REPLAY_NAME = "replay.npz"
_PERIODIC = re.compile(r"^step-(\d+)\.pt$")


class CheckpointError(ValueError):
    """A checkpoint that cannot be used, naming the file and what was expected."""

    def __init__(self, path: object, message: str):
        super().__init__(f"{path}: {message}")
        self.path = str(path)


def save_checkpoint(path: Path, payload: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    torch.save(payload, tmp)
    os.replace(tmp, path)
    return path


def periodic_path(run_dir: Path, env_steps: int) -> Path:
    return run_dir / CHECKPOINT_DIR / f"step-{env_steps:010d}.pt"


def prune_checkpoints(run_dir: Path, keep: int) -> None:
    """Delete all but the newest ``keep`` periodic checkpoints."""
    found = sorted(
        p for p in (run_dir / CHECKPOINT_DIR).glob("step-*.pt") if _PERIODIC.match(p.name)
    )
    for old in found[: max(0, len(found) - keep)]:
        old.unlink(missing_ok=True)


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The final checkpoint if there is one, else the newest periodic one."""
    folder = run_dir / CHECKPOINT_DIR
    if (folder / FINAL_NAME).exists():
        return folder / FINAL_NAME
    found = sorted(p for p in folder.glob("step-*.pt") if _PERIODIC.match(p.name))
    return found[-1] if found else None


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
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(tmp, **arrays)
    os.replace(tmp, path)
    return path


def load_replays(run_dir: Path) -> tuple[int, dict[str, dict[str, np.ndarray]]] | None:
    """``(env_steps, {buffer name: arrays})`` from ``checkpoints/replay.npz``, or None when
    there is none. Read with ``allow_pickle=False``."""
    path = replay_path(run_dir)
    if not path.exists():
        return None
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


REQUIRED_KEYS = ("algo", "config", "network", "obs_spec", "num_actions", "counters")


def load_checkpoint(
    path: str | os.PathLike, map_location: str | torch.device = "cpu"
) -> dict[str, Any]:
    """Load a checkpoint file, or the latest one of a run folder."""
    p = Path(path)
    if p.is_dir():
        found = latest_checkpoint(p)
        if found is None:
            raise CheckpointError(
                p,
                f"expected a checkpoint file or a run folder with {CHECKPOINT_DIR}/*.pt, got none",
            )
        p = found
    if not p.exists():
        raise CheckpointError(p, "expected a checkpoint file, got no such file")
    try:
        payload = torch.load(p, map_location=map_location, weights_only=True)
    except Exception as exc:  # torch raises several types for foreign or damaged files
        raise CheckpointError(
            p, f"expected a DemoStudio checkpoint, got an unreadable file ({exc})"
        ) from None
    if not isinstance(payload, dict) or any(k not in payload for k in REQUIRED_KEYS):
        missing = [k for k in REQUIRED_KEYS if not isinstance(payload, dict) or k not in payload]
        raise CheckpointError(
            p, f"expected checkpoint keys {list(REQUIRED_KEYS)}, missing {missing}"
        )
    payload["path"] = str(p)
    return payload


__all__ = [
    "CheckpointError",
    "latest_checkpoint",
    "load_checkpoint",
    "load_replays",
    "periodic_path",
    "prune_checkpoints",
    "replay_path",
    "save_checkpoint",
    "save_replays",
]

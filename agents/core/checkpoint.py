"""Checkpoints: the agent's name, config, network specs and weights, targets, optimizer,
counters, agent state (a plain dict) and ``interrupted`` (a bool: Ctrl-C stopped the run
there), written atomically (temp file, fsync, rename, so a kill at any moment leaves the
previous file whole); loaded with
``torch.load(weights_only=True)`` (nothing is unpickled).

A checkpoint is read as hostile input: only a regular file is opened (a FIFO named
``final.pt`` would block), only a torch zip archive is handed to torch, its config must name
a plain Gymnasium id (never ``module:Env``, which gymnasium imports) and its counters must
be integers, and networks are rebuilt only once their shapes, worked out on torch's meta
device, match the stored tensors (a spec declaring a width of 10^6 would allocate 160 GB).

``--resume`` continues from the checkpoint with the most env steps (then updates), not
from ``final.pt`` by preference: a resumed run killed after its periodic checkpoints
continues from them. Checkpoints of the previous format (one ``network``/``target`` pair
of a Q network) are read as the current one.
"""

from __future__ import annotations

import json
import numbers
import os
import re
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.core.atomic_file import atomic_write
from demostudio.episode.attrs import GYM_ID
from demostudio.episode.hostile import not_a_regular_file
from demostudio.episode.schema import MAX_GIVEN_SEED

CHECKPOINT_FORMAT = "demostudio-agent"
CHECKPOINT_VERSION = 2
"""The ``format`` and ``version`` a run writes; a checkpoint without them is older (the
previous format wrote neither) and is read."""
CHECKPOINT_DIR = "checkpoints"
FINAL_NAME = "final.pt"
REPLAY_NAME = "replay.npz"
_PERIODIC = re.compile(r"^step-(\d+)\.pt$")


class CheckpointError(ValueError):
    """A checkpoint that cannot be used, naming the file (and the field) and what was
    expected: ``PATH [FIELD]: MESSAGE`` as an episode file's errors."""

    def __init__(self, path: object, message: str, field: str | None = None):
        super().__init__(f"{path}" + (f" [{field}]" if field else "") + f": {message}")
        self.path = str(path)
        self.field = field


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
        payload = _quiet_load(path, "cpu", mmap=True)
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
    payload = _torch_load(p, map_location)
    if isinstance(payload, dict):
        _check_format(p, payload)
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
    _check_values(p, payload)
    payload["path"] = str(p)
    return payload


EXPECTED = "a DemoStudio checkpoint (a torch.save archive of weights-only tensors)"
_ZIP_MAGIC = b"PK\x03\x04"
_GLOBAL = re.compile(r"GLOBAL (\S+)")


def _torch_load(p: Path, map_location: str | torch.device) -> Any:
    """``torch.load(weights_only=True)`` of a torch zip archive; one CheckpointError line
    (never torch's advice to load with ``weights_only=False``, nor its warnings) else."""
    with open(p, "rb") as f:
        magic = f.read(len(_ZIP_MAGIC))
    if magic != _ZIP_MAGIC:
        raise CheckpointError(p, f"expected {EXPECTED}, got an unreadable file: not a zip archive")
    try:
        return _quiet_load(p, map_location)
    except Exception as exc:  # torch raises several types for foreign or damaged files
        named = _GLOBAL.search(str(exc))
        why = (
            f"it names code to run ({named.group(1)}), refused"
            if named
            else "a damaged archive or one holding more than tensors"
        )
        raise CheckpointError(p, f"expected {EXPECTED}, got an unreadable file: {why}") from None


def _quiet_load(p: Path, map_location: str | torch.device, mmap: bool = False) -> Any:
    """``torch.load(weights_only=True)`` without torch's warnings (it warns of pickle
    protocols before refusing a file)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.load(p, map_location=map_location, weights_only=True, mmap=mmap)


def _check_format(p: Path, payload: dict[str, Any]) -> None:
    """``format`` and ``version`` as a run writes them (an episode file's schema check): a
    file of another tool, or of a newer DemoStudio whose layout this one cannot know, is
    refused before anything else is read from it."""
    fmt = payload.get("format", CHECKPOINT_FORMAT)
    if fmt != CHECKPOINT_FORMAT:
        raise CheckpointError(
            p, f"expected a DemoStudio checkpoint ({CHECKPOINT_FORMAT!r}), got {fmt!r:.60}",
            "format",
        )  # fmt: skip
    version = payload.get("version", CHECKPOINT_VERSION)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise CheckpointError(
            p, f"expected a checkpoint version (an integer >= 1), got {version!r:.60}", "version"
        )
    if version > CHECKPOINT_VERSION:
        raise CheckpointError(
            p,
            f"written with checkpoint version {version}; this DemoStudio reads up to "
            f"{CHECKPOINT_VERSION}: upgrade demostudio to open it",
            "version",
        )


def _check_values(p: Path, payload: dict[str, Any]) -> None:
    """The config's env id, env kwargs and seed, the counters and the interrupted mark, as a
    run writes them."""
    cfg = payload["config"]
    env = cfg.get("env")
    if not GYM_ID.check(env):
        raise CheckpointError(p, f"expected {GYM_ID.name}, got {env!r:.200}", field="env")
    kwargs = cfg.get("env_kwargs") or "{}"
    try:
        ok = isinstance(kwargs, str) and isinstance(json.loads(kwargs), dict)
    except ValueError:
        ok = False
    if not ok:
        raise CheckpointError(
            p, f"expected a JSON object as text, got {kwargs!r:.200}", field="env_kwargs"
        )
    seed = cfg.get("seed", 0)
    if (
        not isinstance(seed, numbers.Integral)
        or isinstance(seed, bool)
        or not (0 <= seed <= MAX_GIVEN_SEED)
    ):
        raise CheckpointError(
            p, f"expected an integer from 0 to 2**63-1, got {seed!r:.200}", field="seed"
        )
    if not isinstance(payload.get("interrupted", False), bool):
        raise CheckpointError(
            p, f"expected true or false, got {payload['interrupted']!r:.200}", field="interrupted"
        )
    for key, value in payload["counters"].items():
        if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 0:
            raise CheckpointError(
                p, f"expected an integer >= 0, got {value!r:.200}", field=f"counters.{key}"
            )


def check_weights(
    path: object, net: torch.nn.Module, saved: object, field: str
) -> Mapping[str, torch.Tensor]:
    """``saved`` (weights read from a checkpoint, at ``field``) as ``net``'s: the same keys,
    each a tensor of its parameter's shape, and finite (NaN weights play as if they were
    a policy); one CheckpointError line naming the first key that is not, before any is
    loaded (torch's own refusal spans lines)."""
    if not isinstance(saved, Mapping):
        raise CheckpointError(path, "expected the network's weights, got none", field)
    want = net.state_dict()
    extra = [str(k)[:80] for k in saved if k not in want]
    if extra:
        shown = ", ".join(map(repr, extra[:3])) + (" ..." if len(extra) > 3 else "")
        raise CheckpointError(
            path, f"expected only the network's weights, got {len(extra)} more: {shown}", field
        )
    for key, like in want.items():
        got, shape = saved.get(key), tuple(like.shape)
        where = f"{field}.{key}"
        if not isinstance(got, torch.Tensor):
            raise CheckpointError(path, f"expected a tensor, got {type(got).__name__}", where)
        if tuple(got.shape) != shape:
            raise CheckpointError(
                path, f"expected shape {shape} (from the spec and config), got "
                f"{tuple(got.shape)}", where,
            )  # fmt: skip
        if got.dtype != like.dtype:  # int weights would be cast and play as a policy
            raise CheckpointError(path, f"expected {like.dtype} values, got {got.dtype}", where)
        if got.is_floating_point() and not bool(torch.isfinite(got).all()):
            raise CheckpointError(path, "expected finite weights, got NaN or infinity", where)
    return saved


def build_checked(
    path: object,
    build: Callable[[], Mapping[str, torch.nn.Module]],
    stored: Mapping[str, Any],
) -> Mapping[str, torch.nn.Module]:
    """``build()``'s networks, once the same build on torch's meta device (which allocates
    nothing) has every parameter and buffer of the shape of its tensor in ``stored`` (a
    checkpoint's ``networks``; :func:`check_weights`): a spec or config declaring sizes its
    weights do not have (a hidden width of 10^6 asks for 160 GB) is refused before
    anything is allocated."""
    with torch.device("meta"):
        meta = build()
    for name, net in meta.items():
        check_weights(path, net, stored.get(name), f"networks.{name}")
    return build()


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

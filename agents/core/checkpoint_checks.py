"""What a checkpoint file must be before any of it is used, since it is read as hostile
input: only a torch zip archive is handed to torch (``weights_only=True``, nothing
unpickled), its ``format`` and ``version`` are a run's, its config must name a plain
Gymnasium id (never ``module:Env``, which gymnasium imports) and its counters must be
integers, and networks are rebuilt only once their shapes, worked out on torch's meta
device, match the stored tensors (a spec declaring a width of 10^6 would allocate 160 GB).
Each refusal is one :class:`CheckpointError` line naming the file and the field.
"""

from __future__ import annotations

import json
import numbers
import re
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import torch

from demostudio.episode.attrs import GYM_ID
from demostudio.episode.schema import MAX_GIVEN_SEED

CHECKPOINT_FORMAT = "demostudio-agent"
CHECKPOINT_VERSION = 2
"""The ``format`` and ``version`` a run writes; a checkpoint without them is older (the
previous format wrote neither) and is read."""


class CheckpointError(ValueError):
    """A checkpoint that cannot be used, naming the file (and the field) and what was
    expected: ``PATH [FIELD]: MESSAGE`` as an episode file's errors."""

    def __init__(self, path: object, message: str, field: str | None = None):
        super().__init__(f"{path}" + (f" [{field}]" if field else "") + f": {message}")
        self.path = str(path)
        self.field = field


EXPECTED = "a DemoStudio checkpoint (a torch.save archive of weights-only tensors)"
_ZIP_MAGIC = b"PK\x03\x04"
_GLOBAL = re.compile(r"GLOBAL (\S+)")


def load_archive(p: Path, map_location: str | torch.device) -> Any:
    """``torch.load(weights_only=True)`` of a torch zip archive; one CheckpointError line
    (never torch's advice to load with ``weights_only=False``, nor its warnings) else."""
    with open(p, "rb") as f:
        magic = f.read(len(_ZIP_MAGIC))
    if magic != _ZIP_MAGIC:
        raise CheckpointError(p, f"expected {EXPECTED}, got an unreadable file: not a zip archive")
    try:
        return quiet_load(p, map_location)
    except Exception as exc:  # torch raises several types for foreign or damaged files
        named = _GLOBAL.search(str(exc))
        why = (
            f"it names code to run ({named.group(1)}), refused"
            if named
            else "a damaged archive or one holding more than tensors"
        )
        raise CheckpointError(p, f"expected {EXPECTED}, got an unreadable file: {why}") from None


def quiet_load(p: Path, map_location: str | torch.device, mmap: bool = False) -> Any:
    """``torch.load(weights_only=True)`` without torch's warnings (it warns of pickle
    protocols before refusing a file)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.load(p, map_location=map_location, weights_only=True, mmap=mmap)


def check_format(p: Path, payload: dict[str, Any]) -> None:
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


def check_values(p: Path, payload: dict[str, Any]) -> None:
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

"""What a run will hold in memory, estimated before anything big is allocated, against what
the machine has available: ``--replay-capacity 100000000`` or ``--hidden 40000`` is refused
in one line naming the flag and the estimate, instead of a MemoryError traceback (or a
machine swapping for minutes before the kernel kills the run).

The estimate counts the parts that grow with the flags: the replay buffers (capacity x
sequence length x the bytes of one step), the networks' parameters (with their gradients,
Adam's two moments and a target copy), a learner batch's activations and, for on-policy
runs, the rollout. It is an estimate ("~"), not a bound: Python, torch and the envs add a
few hundred MB that no flag controls.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import torch

from agents.core.preprocess import ObsSpec

GIB = 2**30

_LEAF_ITEM_BYTES = {"frame": 1, "grid": 1, "discrete": 8, "vector": 4}
_STEP_FIELDS_BYTES = 8 + 4 + 8 + 4 + 4 + 1
"""prev_action int64, prev_reward float32, action int64, reward float32, terminal float32,
mask bool (agents.core.sequences.SequenceBatch)."""
_PER_SEQUENCE_PRIORITY_BYTES = 8 + 16
"""The raw priority (float64) and its sum-tree nodes."""
_PARAM_COPIES = 5
"""Weights, gradients, Adam's two moments and a target network, 4 bytes each."""


class Part(NamedTuple):
    name: str
    """What needs the memory: "the agent replay", "the networks", ..."""
    flags: str
    """The flags that size it, with their values (``--replay-capacity 1000000``)."""
    detail: str
    """How the figure was reached, for the message."""
    bytes: int


def available_memory() -> int | None:
    """Bytes the machine can give this process now (psutil's ``available`` when psutil is
    installed, else MemAvailable of /proc/meminfo); None when neither says."""
    try:
        import psutil  # type: ignore[import-not-found]

        return int(psutil.virtual_memory().available)
    except Exception:  # not installed (it is optional), or no figure on this platform
        pass
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def step_bytes(spec: ObsSpec, num_actions: int) -> int:
    """Bytes of one stored step: the preprocessed observation leaves, the step's fields and
    room for per-step policy extras (Reactor's behaviour probabilities)."""
    obs = sum(
        int(np.prod(leaf.shape, dtype=np.int64)) * _LEAF_ITEM_BYTES.get(leaf.kind, 4)
        for leaf in spec.values()
    )
    return obs + _STEP_FIELDS_BYTES + 4 * (1 + num_actions)


def _obs_floats(spec: ObsSpec) -> int:
    return sum(int(np.prod(leaf.shape, dtype=np.int64)) for leaf in spec.values())


def gib(n: float) -> str:
    """``n`` bytes as GiB with a sensible number of digits."""
    g = n / GIB
    return f"{g:,.0f}" if g >= 100 else f"{g:.1f}" if g >= 1 else f"{g:.2f}"


def parameter_count(networks: Mapping[str, torch.nn.Module]) -> int:
    return sum(p.numel() for net in networks.values() for p in net.parameters())


class Store(NamedTuple):
    """A replay buffer of sequences the run will hold."""

    name: str
    """"the agent replay", "the demo replay", "the episode memory", ..."""
    flags: str
    """The flags that size it, with their values."""
    capacity: int
    """Sequences it holds at most."""


class Rollout(NamedTuple):
    """An on-policy rollout, kept twice (the steps and what the epochs read of them)."""

    envs: int
    steps: int
    flags: str


class Sizes(NamedTuple):
    """What sizes a run's memory, as its agent states it from its own config
    (:meth:`agents.core.agent.Agent.memory_sizes`): this module reads no config."""

    sequence_length: int
    """Steps of a stored or learned sequence."""
    hidden: int
    """The torso's width (activations per step)."""
    lstm: int
    """The LSTM's width (its stored state and gates)."""
    widths: tuple[tuple[str, int], ...]
    """The flags that size the networks, with their values, for the message."""
    stores: tuple[Store, ...] = ()
    batch: int = 0
    """Sequences in one learner batch (0: no batch counted)."""
    batch_flags: str = ""
    outputs_per_action: int = 1
    """Head outputs per action (a distributional critic's atoms)."""
    extra_width: int = 0
    """Widths of further networks run on every step (RND's predictor and target)."""
    rollout: Rollout | None = None


def demo_sequences(demos: tuple[Path, ...], period: int) -> int | None:
    """About how many sequences ``demos`` cut into (from the files' lengths, one per
    ``period`` steps and one more per episode end); None when there are none or they cannot
    be read (loading them says why)."""
    if not demos:
        return None
    from demostudio.episode import find_episodes, read_summary

    try:
        lengths = [read_summary(p).length for p in find_episodes(list(demos))]
    except Exception:  # a bad file: reported when the demos are loaded
        return None
    period = max(1, int(period))
    return sum(n // period + 1 for n in lengths)


def demo_store(demos: tuple[Path, ...], period: int, capacity: int, count_demos: bool) -> Store:
    """The demo replay: the demos it will hold (never more than ``capacity``: its buffer's
    pages beyond them are never touched). ``count_demos`` False: ``capacity``, without
    reading the demo files (an upper bound)."""
    held = demo_sequences(demos, period) if count_demos else None
    if held is None or held >= capacity:
        return Store("the demo replay", f"--demo-capacity {capacity}", capacity)
    return Store("the demo replay", f"--demos ({held} sequences)", held)


def estimate(sizes: Sizes, spec: ObsSpec, num_actions: int, params: int) -> list[Part]:
    """The parts of a run's memory that its flags size (see the module docstring)."""
    parts: list[Part] = []
    step = step_bytes(spec, num_actions)
    length, lstm = sizes.sequence_length, sizes.lstm
    per_seq = length * step + 2 * 4 * lstm + _PER_SEQUENCE_PRIORITY_BYTES
    for store in sizes.stores:
        detail = f"{store.capacity:,} sequences of {length} steps, {per_seq:,} bytes each"
        parts.append(Part(store.name, store.flags, detail, store.capacity * per_seq))
    parts.append(
        Part(
            "the networks",
            ", ".join(f"--{n.replace('_', '-')} {v}" for n, v in sizes.widths),
            f"{params:,} parameters, with gradients, Adam's moments and a target copy",
            params * 4 * _PARAM_COPIES,
        )
    )

    # activations kept for the backward pass, per step of a batch (a rough count of the
    # layers' outputs: encoder and heads ~6 x hidden, LSTM gates ~10 x lstm, the outputs)
    per_step = (_obs_floats(spec) + 6 * sizes.hidden + 10 * lstm
                + 3 * num_actions * sizes.outputs_per_action + 2 * sizes.extra_width)  # fmt: skip
    if sizes.batch:
        parts.append(
            Part(
                "a learner batch",
                sizes.batch_flags,
                f"{sizes.batch:,} sequences of {length} steps, ~{per_step * 4 * 2:,} bytes of "
                f"activations per step",
                sizes.batch * length * per_step * 4 * 2,
            )
        )
    if sizes.rollout is not None:
        envs, steps = sizes.rollout.envs, sizes.rollout.steps
        parts.append(
            Part(
                "the rollout",
                sizes.rollout.flags,
                f"{envs:,} envs x {steps:,} steps, {step:,} bytes each (kept twice)",
                2 * envs * steps * step,
            )
        )
    return parts


def check_fits(parts: list[Part], available: int | None) -> None:
    """ValueError naming the largest part's flags when the parts together need more memory
    than ``available`` bytes (None: unknown, nothing is checked)."""
    if available is None or not parts:
        return
    total = sum(p.bytes for p in parts)
    if total <= available:
        return
    big = max(parts, key=lambda p: p.bytes)
    whole = "" if big.bytes == total else f"; the run ~{gib(total)} GiB in all"
    raise ValueError(
        f"{big.flags}: {big.name} would need ~{gib(big.bytes)} GiB ({big.detail}{whole}), "
        f"this machine has ~{gib(available)} GiB available"
    )


def meta_parameter_count(build: Any) -> int:
    """Parameters of ``build()``'s networks, built on torch's meta device (nothing is
    allocated, so a width of 10^6 costs nothing to count)."""
    with torch.device("meta"):
        networks = build()
    return parameter_count(networks)


__all__ = [
    "Part",
    "Rollout",
    "Sizes",
    "Store",
    "available_memory",
    "check_fits",
    "demo_sequences",
    "demo_store",
    "estimate",
    "gib",
    "meta_parameter_count",
    "parameter_count",
    "step_bytes",
]

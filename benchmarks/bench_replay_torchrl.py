"""Prioritized sequence replay: ours (agents/core/replay.py) against torchrl's replay buffers.

torchrl is not a project dependency; this benchmark only weighs it. Install it into the venv
by hand (``pip install torchrl==0.14.1``, without changing torch); without it the script
says so and exits 0.

One synthetic CartPole-like stream (obs dim 4, ``num_actors`` envs, random episode lengths,
LSTM state stored with every step) is cut into the project's sequences with its own
:class:`SequenceWriter` (default :class:`ReplayAgentConfig`: burn-in + trace + 1 steps, a new
sequence every ``period`` steps, zero-padded ends). Each implementation is filled to
capacity first, then timed per call (median and p99):

* ``add``: what one actor step hands over (ours and torchrl_sequences: the sequences that
  step completed, when it completed any; torchrl_slices: the ``num_actors`` new steps);
* ``sample``: one batch of ``batch_size`` sequences (slices of the same length);
* ``update``: priorities of the sampled items from ``[B, trace]`` |td| and mask.

Implementations:

* ``ours``: PrioritizedSequenceReplay, one priority per sequence (eta-mixed max/mean |td|);
* ``torchrl_sequences``: ReplayBuffer(LazyTensorStorage, PrioritizedSampler) holding the
  same pre-cut sequences with the same priorities: the like-for-like comparison;
* ``torchrl_slices``: ReplayBuffer(LazyTensorStorage(ndim=2), PrioritizedSliceSampler) over
  the flat step stream ([time, env] layout) with per-step priorities.

torchrl's prioritized samplers need its compiled extension (the sum/min segment trees).
If that fails to load (a wheel built against another torch), the torchrl variants run
with the uniform RandomSampler / SliceSampler instead, marked ``"sampler": "uniform"``:
a lower bound on torchrl's cost, and no ``update`` figures.

Run: ``python benchmarks/bench_replay_torchrl.py [--iters 2000] [--add-steps 5000]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

from agents.core.config import ReplayAgentConfig
from agents.core.replay import PrioritizedSequenceReplay, sequence_priority
from agents.core.sequences import EndBehavior, SequenceBatch, SequenceWriter, concat_batches

os.environ.setdefault("TORCHRL_CONSOLE_STREAM", "stderr")  # keep stdout pure JSON

OBS_DIM = 4
WARMUP = 20  # untimed sample + update calls before the timed ones
REPLAY_PY = Path(__file__).resolve().parents[1] / "agents" / "core" / "replay.py"


# --- the shared data stream -------------------------------------------------------------------


class Stream:
    """``T`` actor steps of ``E`` envs: per step and env what an actor sees (numpy)."""

    def __init__(self, steps: int, envs: int, hidden: int, rng: np.random.Generator):
        self.obs = rng.standard_normal((steps + 1, envs, OBS_DIM), dtype=np.float32)
        self.final_obs = rng.standard_normal((steps, envs, OBS_DIM), dtype=np.float32)
        self.h = rng.standard_normal((steps + 1, envs, hidden), dtype=np.float32)
        self.c = rng.standard_normal((steps + 1, envs, hidden), dtype=np.float32)
        self.action = rng.integers(0, 2, (steps, envs))
        self.reward = np.ones((steps, envs), np.float32)
        # CartPole-like episode lengths: 20..200 steps, envs out of phase
        self.done = np.zeros((steps, envs), bool)
        for e in range(envs):
            t = int(rng.integers(0, 200))
            while t < steps:
                self.done[t, e] = True
                t += int(rng.integers(20, 201))
        self.terminal = self.done & (rng.random((steps, envs)) < 0.9)  # a few truncations
        self.prev_action = np.full((steps, envs), -1, np.int64)
        self.prev_reward = np.zeros((steps, envs), np.float32)
        for t in range(1, steps):
            cont = ~self.done[t - 1]
            self.prev_action[t] = np.where(cont, self.action[t - 1], -1)
            self.prev_reward[t] = np.where(cont, self.reward[t - 1], 0.0)
        self.steps, self.envs = steps, envs

    def next_obs(self, t: int) -> np.ndarray:
        """``[E, obs]`` the observation after step ``t`` (the final one where it ended)."""
        return np.where(self.done[t][:, None], self.final_obs[t], self.obs[t + 1])

    def sequences(self, cfg: ReplayAgentConfig) -> list[SequenceBatch | None]:
        """Per actor step, the sequences it completed, cut as the project's actor does."""
        end = EndBehavior(cfg.end_behavior)
        writers = [SequenceWriter(cfg.sequence_length, cfg.period, end) for _ in range(self.envs)]
        for e, w in enumerate(writers):
            w.begin({"obs": self.obs[0, e]}, self.h[0, e], self.c[0, e])
        out: list[SequenceBatch | None] = []
        for t in range(self.steps):
            nxt = self.next_obs(t)
            parts = []
            for e, w in enumerate(writers):
                seq = w.step(
                    int(self.action[t, e]),
                    float(self.reward[t, e]),
                    bool(self.terminal[t, e]),
                    {"obs": nxt[e]},
                    self.h[t + 1, e],
                    self.c[t + 1, e],
                )
                parts += [seq] if seq is not None else []
                if self.done[t, e]:
                    last = w.end()
                    parts += [last] if last is not None else []
                    w.begin({"obs": self.obs[t + 1, e]}, self.h[t + 1, e], self.c[t + 1, e])
            out.append(concat_batches(parts) if parts else None)
        return out


# --- torchrl glue (what the project would write to use torchrl) -------------------------------


def sequences_to_td(batch: SequenceBatch):
    """``SequenceBatch`` (numpy) -> TensorDict ``[B]`` of the same fields (no copy)."""
    from tensordict import TensorDict

    fields = {name: torch.from_numpy(getattr(batch, name)) for name in SequenceBatch._fields[1:]}
    fields.update({("obs", k): torch.from_numpy(v) for k, v in batch.obs.items()})
    return TensorDict(fields, batch_size=[len(batch)])


def steps_to_td(stream: Stream, lo: int, hi: int):
    """Actor steps ``lo..hi-1`` of every env -> TensorDict ``[E, hi - lo]`` (torchrl's
    [env, time] layout for ``ndim=2`` storages)."""
    from tensordict import TensorDict

    def env_major(x: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(np.ascontiguousarray(np.swapaxes(x, 0, 1)))

    next_obs = np.stack([stream.next_obs(t) for t in range(lo, hi)])
    fields = {
        ("obs", "obs"): env_major(stream.obs[lo:hi]),
        "prev_action": env_major(stream.prev_action[lo:hi]),
        "prev_reward": env_major(stream.prev_reward[lo:hi]),
        "action": env_major(stream.action[lo:hi]),
        "reward": env_major(stream.reward[lo:hi]),
        "terminal": env_major(stream.terminal[lo:hi].astype(np.float32)),
        "h": env_major(stream.h[lo:hi]),
        "c": env_major(stream.c[lo:hi]),
        ("next", "obs", "obs"): env_major(next_obs),
        ("next", "done"): env_major(stream.done[lo:hi, :, None]),
    }
    return TensorDict(fields, batch_size=[stream.envs, hi - lo])


def prioritized_available() -> str | None:
    """None when torchrl's prioritized samplers work here, else why not."""
    from torchrl.data import PrioritizedSampler

    try:
        PrioritizedSampler(1, alpha=0.6, beta=0.6)
    except RuntimeError as exc:
        return f"{exc} (torchrl's C++ extension failed to load)"
    return None


def torchrl_sequence_buffer(cfg: ReplayAgentConfig, prioritized: bool):
    from torchrl.data import LazyTensorStorage, PrioritizedSampler, RandomSampler, ReplayBuffer

    if prioritized:
        sampler = PrioritizedSampler(
            cfg.replay_capacity, alpha=cfg.priority_alpha, beta=cfg.priority_beta
        )
    else:
        sampler = RandomSampler()
    return ReplayBuffer(storage=LazyTensorStorage(cfg.replay_capacity), sampler=sampler)


def torchrl_slice_buffer(cfg: ReplayAgentConfig, capacity_steps: int, prioritized: bool):
    from torchrl.data import (
        LazyTensorStorage,
        PrioritizedSliceSampler,
        ReplayBuffer,
        SliceSampler,
    )

    slices = {"slice_len": cfg.sequence_length, "end_key": ("next", "done")}
    if prioritized:
        sampler = PrioritizedSliceSampler(
            capacity_steps, alpha=cfg.priority_alpha, beta=cfg.priority_beta, **slices
        )
    else:
        sampler = SliceSampler(**slices)
    return ReplayBuffer(storage=LazyTensorStorage(capacity_steps, ndim=2), sampler=sampler)


# --- timing -----------------------------------------------------------------------------------


def summary(times_s: list[float]) -> dict:
    ms = np.asarray(times_s) * 1000.0
    if len(ms) == 0:
        return {"calls": 0}
    return {
        "median_ms": round(float(np.median(ms)), 4),
        "p99_ms": round(float(np.percentile(ms, 99)), 4),
        "calls": len(ms),
        "total_s": round(float(ms.sum()) / 1000.0, 3),
    }


def timed(fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t0


def fake_td(rng: np.random.Generator, cfg: ReplayAgentConfig) -> tuple[np.ndarray, np.ndarray]:
    """``[B, trace]`` |td| and learned mask as the learner returns them (a few padded steps)."""
    td = np.abs(rng.standard_normal((cfg.batch_size, cfg.trace))).astype(np.float32)
    mask = rng.random((cfg.batch_size, cfg.trace)) > 0.05
    return td, mask


def bench_ours(cfg, seqs, fill, iters, rng) -> dict:
    replay = PrioritizedSequenceReplay(
        cfg.replay_capacity, cfg.priority_alpha, cfg.priority_beta, cfg.priority_eta, seed=0
    )
    for s in seqs[:fill]:
        if s is not None:
            replay.add(s)
    add = [timed(replay.add, s)[1] for s in seqs[fill:] if s is not None]
    sample, update = [], []
    for i in range(WARMUP + iters):
        if i == WARMUP:
            sample, update = [], []
        got, dt = timed(replay.sample, cfg.batch_size)
        sample.append(dt)
        td, mask = fake_td(rng, cfg)
        t0 = time.perf_counter()
        replay.update_priorities(got.index, sequence_priority(td, mask, cfg.priority_eta))
        update.append(time.perf_counter() - t0)
    return {
        "size": len(replay),
        "add": summary(add),
        "sample": summary(sample),
        "update": summary(update),
    }


def bench_torchrl_sequences(cfg, seqs, fill, iters, rng, prioritized) -> dict:
    rb = torchrl_sequence_buffer(cfg, prioritized)
    chunk: list[SequenceBatch] = []
    for s in seqs[:fill]:  # untimed fill, in chunks
        chunk += [s] if s is not None else []
        if len(chunk) >= 256:
            rb.extend(sequences_to_td(concat_batches(chunk)))
            chunk = []
    if chunk:
        rb.extend(sequences_to_td(concat_batches(chunk)))
    add = []
    for s in seqs[fill:]:
        if s is not None:
            t0 = time.perf_counter()
            rb.extend(sequences_to_td(s))
            add.append(time.perf_counter() - t0)
    sample, update = [], []
    for i in range(WARMUP + iters):
        if i == WARMUP:
            sample, update = [], []
        (batch, info), dt = timed(rb.sample, cfg.batch_size, True)
        sample.append(dt)
        assert batch["obs", "obs"].shape == (cfg.batch_size, cfg.sequence_length, OBS_DIM)
        if prioritized:
            td, mask = fake_td(rng, cfg)
            t0 = time.perf_counter()
            prio = sequence_priority(td, mask, cfg.priority_eta)
            rb.update_priority(info["index"], torch.from_numpy(prio))
            update.append(time.perf_counter() - t0)
    return {
        "sampler": "PrioritizedSampler" if prioritized else "uniform (RandomSampler)",
        "size": len(rb),
        "add": summary(add),
        "sample": summary(sample),
        "update": summary(update) if prioritized else None,
    }


def bench_torchrl_slices(cfg, stream, fill, iters, rng, prioritized) -> dict:
    capacity_steps = cfg.replay_capacity * cfg.period  # the env steps our replay covers
    rb = torchrl_slice_buffer(cfg, capacity_steps, prioritized)
    for lo in range(0, fill, 1000):  # untimed fill, in chunks
        rb.extend(steps_to_td(stream, lo, min(fill, lo + 1000)))
    add = []
    for t in range(fill, stream.steps):
        t0 = time.perf_counter()
        rb.extend(steps_to_td(stream, t, t + 1))
        add.append(time.perf_counter() - t0)
    length, burn = cfg.sequence_length, cfg.burn_in
    sample, update = [], []
    for i in range(WARMUP + iters):
        if i == WARMUP:
            sample, update = [], []
        (batch, info), dt = timed(rb.sample, cfg.batch_size * length, True)
        sample.append(dt)
        batch = batch.view(cfg.batch_size, length)  # [B, L] sequences, as ours
        h0 = batch["h"][:, 0]  # stored state at each slice start
        assert h0.shape == (cfg.batch_size, cfg.lstm)
        if prioritized:
            td, mask = fake_td(rng, cfg)
            t0 = time.perf_counter()
            # per-step priorities on the learned (trace) steps of each slice
            learned = [
                i.view(cfg.batch_size, length)[:, burn : burn + cfg.trace] for i in info["index"]
            ]
            keep = torch.from_numpy(mask).reshape(-1)
            index = tuple(i.reshape(-1)[keep] for i in learned)
            rb.update_priority(index, torch.from_numpy(td).reshape(-1)[keep])
            update.append(time.perf_counter() - t0)
    return {
        "sampler": "PrioritizedSliceSampler" if prioritized else "uniform (SliceSampler)",
        "capacity_steps": capacity_steps,
        "size_steps": len(rb),
        "add": summary(add),
        "sample": summary(sample),
        "update": summary(update) if prioritized else None,
    }


# --- clarity ----------------------------------------------------------------------------------


def code_lines(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.strip() and not line.strip().startswith("#"))


def clarity() -> dict:
    import torchrl

    ours = REPLAY_PY.read_text()
    glue = [sequences_to_td, steps_to_td, torchrl_sequence_buffer, torchrl_slice_buffer]
    rb_dir = Path(torchrl.__file__).parent / "data" / "replay_buffers"
    lib = [
        "samplers/prioritized.py",
        "samplers/prioritized_slice.py",
        "samplers/slice.py",
        "storages/tensor.py",
        "writers/round_robin.py",
        "replay_buffers/base.py",
    ]
    return {
        "ours_replay_py_lines": len(ours.splitlines()),
        "ours_replay_py_code_lines": code_lines(ours),
        "torchrl_glue_lines_in_this_file": sum(
            len(inspect.getsource(f).splitlines()) for f in glue
        ),
        "torchrl_python_lines_behind_it": {
            p: len((rb_dir / p).read_text().splitlines()) for p in lib if (rb_dir / p).exists()
        },
    }


NOTES = [
    "Same stream for all: per actor step, num_actors envs; obs float32[4], LSTM h/c float32[lstm]; "
    "episodes of 20..200 steps. ours and torchrl_sequences store identical pre-cut sequences "
    "(SequenceWriter, zero-padded ends, mask), torchrl_slices stores the steps they were cut from.",
    "add: ours/torchrl_sequences time one call per actor step that completed sequences (1/period "
    "of steps per env); torchrl_slices times one extend of num_actors steps per actor step. "
    "Compare add.total_s for the cost of ingesting the same env steps. Conversion of the actor's "
    "numpy arrays to a TensorDict (zero-copy torch.from_numpy) is inside the torchrl timings.",
    "sample: ours returns numpy (SequenceBatch), torchrl returns a torch TensorDict; ours' IS "
    "weights are (N*P)^-beta normalised by the batch max later (ReplayMix), torchrl's are "
    "normalised by the buffer's min priority inside sample().",
    "update: ours and torchrl_sequences both compute eta*max+(1-eta)*mean |td| per sequence "
    "(same function) and write B priorities. torchrl_slices writes one priority per learned step "
    "(B*trace, masked): per-step priorities.",
    "torchrl_slices semantics differ: a slice start is drawn by that step's own priority (not "
    "the sequence's), slices never cross an episode end ((next, done)) and episodes shorter than "
    "a slice are never sampled (strict_length=True), no zero padding; the storage holds h/c for "
    "every step (any step can start a slice) and (next, obs) for the bootstrap observation; "
    "trajectory boundaries are recomputed from (next, done) over the whole storage on every "
    "sample (cache_values would be invalidated by each actor write).",
    "Timings are single-threaded (torch.set_num_threads(1)), wall clock per call, after "
    f"{WARMUP} untimed sample + update calls.",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iters", type=int, default=2000, help="sample + update calls")
    parser.add_argument(
        "--add-steps", type=int, default=5000, help="timed actor steps of adding after the fill"
    )
    args = parser.parse_args()

    if importlib.util.find_spec("torchrl") is None:
        print(
            "torchrl is not installed: nothing to compare against. It is not a project "
            "dependency; to run this benchmark: pip install torchrl==0.14.1 (keep torch as is)."
        )
        sys.exit(0)

    torch.set_num_threads(1)
    torch.manual_seed(0)
    np.random.seed(0)  # noqa: NPY002 (torchrl's CPU prioritized sampler draws from it)
    cfg = ReplayAgentConfig()
    rng = np.random.default_rng(0)
    # fill: enough actor steps for the replay to wrap (capacity sequences, one per period)
    fill = int(1.1 * cfg.replay_capacity * cfg.period / cfg.num_actors)
    t0 = time.perf_counter()
    stream = Stream(fill + args.add_steps, cfg.num_actors, cfg.lstm, rng)
    seqs = stream.sequences(cfg)
    make_s = time.perf_counter() - t0

    reason = prioritized_available()
    prioritized = reason is None
    results = {
        "ours": bench_ours(cfg, seqs, fill, args.iters, rng),
        "torchrl_sequences": bench_torchrl_sequences(cfg, seqs, fill, args.iters, rng, prioritized),
        "torchrl_slices": bench_torchrl_slices(cfg, stream, fill, args.iters, rng, prioritized),
    }
    ratios = {}
    for name in ("torchrl_sequences", "torchrl_slices"):
        for op in ("add", "sample", "update"):
            theirs = results[name][op]
            if theirs and theirs.get("calls"):
                key = "total_s" if op == "add" else "median_ms"
                ratios[f"{name}/ours {op} ({key})"] = round(
                    theirs[key] / results["ours"][op][key], 2
                )

    import tensordict
    import torchrl

    report = {
        "setting": {
            "sequence_length": cfg.sequence_length,
            "burn_in": cfg.burn_in,
            "trace": cfg.trace,
            "period": cfg.period,
            "capacity_sequences": cfg.replay_capacity,
            "batch_size": cfg.batch_size,
            "num_actors": cfg.num_actors,
            "obs_dim": OBS_DIM,
            "lstm": cfg.lstm,
            "alpha_beta_eta": [cfg.priority_alpha, cfg.priority_beta, cfg.priority_eta],
            "fill_actor_steps": fill,
            "timed_add_actor_steps": args.add_steps,
            "iters": args.iters,
            "make_data_s": round(make_s, 1),
        },
        "versions": {
            "torch": torch.__version__,
            "torchrl": torchrl.__version__,
            "tensordict": tensordict.__version__,
            "numpy": np.__version__,
        },
        "torchrl_prioritized": prioritized,
        "torchrl_prioritized_unavailable_because": reason,
        "results": results,
        "ratios_torchrl_over_ours": ratios,
        "clarity": clarity(),
        "notes": NOTES,
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

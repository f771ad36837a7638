"""Behaviour identity of the agents core: every registered algorithm trains a tiny fixed-seed
budget on CartPole-v1 (the shipped demos in demos/CartPole-v1 for the algorithms that use
demos), one torch thread, and the final checkpoint is hashed. A refactor of the core that
means to change nothing must leave every hash as it was.

  python benchmarks/bench_core_identity.py [--only r2d2 ppo ...] [--out FILE]
      runs every case (each in its own process) and prints one JSON object:
      {case: {"weights": sha256, "optimizer": sha256, "agent_state": sha256,
              "counters": {...}, "updates": n, "seconds": s}}
  python benchmarks/bench_core_identity.py --compare A.json B.json
      the cases whose hashes or counters differ (exit 1 if any)
  python benchmarks/bench_core_identity.py --baseline-src DIR [--out FILE]
      every case run on the tree in DIR (a ``git archive`` of the commit to compare with)
      and on this one, one after the other, then compared: {"before": ..., "after": ...,
      "differences": [...]} (exit 1 if any)
  python benchmarks/bench_core_identity.py --baseline-src DIR --pin mirror=none ...
      the same with FIELD=VALUE set in every case whose config has FIELD, on both trees:
      a default meant to change between the trees is held at one value, so the code is
      compared under the same settings

Both trees run the cases of this script (its own copy of the cases, with each tree's
packages first on the path), so they train the same cases.

``weights`` covers the learner's networks and their target copies, ``optimizer`` Adam's
state, ``agent_state`` what the agent checkpoints of its own (RND statistics, episode
memory); each is a sha256 over the sorted keys, dtypes, shapes and tensor bytes. The cases
cover each algorithm's phases (DQfD and RND-PPO pre-training, BC's early stopping), its
acting policy's extras (Reactor's mu and, with TIS, the whole behaviour; RND-PPO's epsilon
mixture), R2D3's episode memory and a resumed run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEMOS = ROOT / "demos" / "CartPole-v1"

SMALL = dict(env="CartPole-v1", seed=3, hidden=16, lstm=16, device="cpu", torch_threads=1,
             progress=False, tensorboard=False, eval_episodes=1)  # fmt: skip
REPLAY = dict(SMALL, num_actors=2, burn_in=2, trace=6, period=4, batch_size=8, min_replay=16,
              total_env_steps=1200, eval_every=600, checkpoint_every=100_000,
              env_steps_per_update=4.0)  # fmt: skip
ON_POLICY = dict(SMALL, num_envs=4, rollout_length=32, segment_length=8, update_epochs=2,
                 num_minibatches=2, total_env_steps=1024, eval_every=512,
                 checkpoint_every=100_000, rnd_embed_dim=16, rnd_hidden=16,
                 obs_norm_init_steps=8)  # fmt: skip

CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "r2d2": ("r2d2", REPLAY),
    "r2d3": ("r2d3", dict(REPLAY, demos=[DEMOS])),
    "r2d3-memory": (
        "r2d3",
        dict(REPLAY, demos=[DEMOS], episode_memory_ratio=0.25, episode_memory_capacity=64),
    ),
    "dqfd": ("dqfd", dict(REPLAY, demos=[DEMOS], pretrain_updates=40, pretrain_log_every=20)),
    "sqil": ("sqil", dict(REPLAY, demos=[DEMOS])),
    "bc": (
        "bc",
        dict(
            SMALL,
            demos=[DEMOS],
            trace=6,
            period=4,
            batch_size=8,
            max_updates=120,
            val_every=20,
            eval_every=60,
            val_fraction=0.5,
            patience=2,
        ),
    ),
    "reactor": ("reactor", dict(REPLAY, demos=[DEMOS])),
    "reactor-tis": ("reactor", dict(REPLAY, policy_gradient="tis", distributional=False)),
    "rnd-ppo": (
        "rnd-ppo",
        dict(ON_POLICY, demos=[DEMOS], bc_pretrain_updates=20, epsilon_greedy=0.1),
    ),
    "ppo": ("ppo", ON_POLICY),
}
PINS: dict[str, Any] = {}
"""FIELD=VALUE pairs of --pin, set in every case whose config has FIELD."""
RESUMED = {"rnd-ppo-resumed": ("rnd-ppo", 512), "r2d3-memory-resumed": ("r2d3-memory", 600)}
"""Cases run to half their budget, then resumed to the whole (the resumed run's hashes are
not those of the straight run: the actors restart their envs)."""


def _digest(tree: Any) -> str:
    """sha256 over a nest of dicts / lists / tensors / numbers, keys sorted."""
    import torch

    h = hashlib.sha256()

    def walk(x: Any, path: str) -> None:
        if isinstance(x, dict):
            for k in sorted(x, key=str):
                walk(x[k], f"{path}/{k}")
        elif isinstance(x, (list, tuple)):
            for i, v in enumerate(x):
                walk(v, f"{path}/{i}")
        elif isinstance(x, torch.Tensor):
            t = x.detach().cpu().contiguous()
            h.update(f"{path}:{t.dtype}:{tuple(t.shape)}:".encode())
            h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
        else:
            h.update(f"{path}={x!r};".encode())

    walk(tree, "")
    return h.hexdigest()


def _config(algo: str, fields: dict[str, Any], run_dir: Path, **extra: Any) -> Any:
    import dataclasses

    from agents.registry import get_algorithm

    cls = get_algorithm(algo).config_cls
    names = {f.name for f in dataclasses.fields(cls)}
    pinned = {k: v for k, v in PINS.items() if k in names}
    values = dict(fields, **extra, **pinned)
    if "demos" in values:
        values["demos"] = tuple(Path(p) for p in values["demos"])
    return cls(**values, run_dir=run_dir)


def run_case(name: str) -> dict[str, Any]:
    """Train case ``name`` in a fresh folder and hash its final checkpoint."""
    from agents.core.checkpoint import load_checkpoint
    from agents.registry import get_algorithm

    resumed = RESUMED.get(name)
    algo, fields = CASES[resumed[0] if resumed else name]
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "run"
        train = get_algorithm(algo).train
        if resumed:
            train(_config(algo, fields, run_dir, total_env_steps=resumed[1]))
            train(_config(algo, fields, run_dir, resume=True))
        else:
            train(_config(algo, fields, run_dir))
        payload = load_checkpoint(run_dir / "checkpoints" / "final.pt")
    return {
        "weights": _digest({"networks": payload["networks"], "targets": payload["targets"]}),
        "optimizer": _digest(payload["optimizer"]),
        "agent_state": _digest(payload.get("agent_state") or {}),
        "counters": {k: int(v) for k, v in sorted(payload["counters"].items())},
        "updates": int(payload["updates"]),
        "seconds": round(time.perf_counter() - t0, 1),
    }


def compare(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """The differences between two result files (``seconds`` ignored)."""
    out = []
    for case in sorted(set(a) | set(b)):
        if case not in a or case not in b:
            out.append(f"{case}: only in {'the first' if case in a else 'the second'}")
            continue
        for key in ("weights", "optimizer", "agent_state", "counters", "updates"):
            if a[case].get(key) != b[case].get(key):
                out.append(f"{case}: {key} {a[case].get(key)} -> {b[case].get(key)}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", help="cases to run (default: all)")
    parser.add_argument("--out", type=Path, help="also write the JSON here")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"))
    parser.add_argument("--baseline-src", type=Path, metavar="DIR",
                        help="run every case on the tree in DIR too, and compare")  # fmt: skip
    parser.add_argument("--pin", nargs="*", default=[], metavar="FIELD=VALUE",
                        help="set FIELD (a JSON value, else a string) in every case whose "
                        "config has it, on both trees")  # fmt: skip
    parser.add_argument("--case", help=argparse.SUPPRESS)  # one case, in a child process
    args = parser.parse_args()
    for pair in args.pin:
        field, sep, text = pair.partition("=")
        if not sep or not field:
            parser.error(f"--pin: expected FIELD=VALUE, got {pair!r}")
        try:
            PINS[field] = json.loads(text)
        except json.JSONDecodeError:
            PINS[field] = text
    if args.compare:
        a, b = (json.loads(p.read_text()) for p in args.compare)
        diffs = compare(a, b)
        print("\n".join(diffs) if diffs else f"identical: {len(a)} cases")
        sys.exit(1 if diffs else 0)
    if args.case:
        print(json.dumps(run_case(args.case)))
        return
    names = args.only or [*CASES, *RESUMED]
    unknown = [n for n in names if n not in CASES and n not in RESUMED]
    if unknown:
        parser.error(f"--only: expected cases of {[*CASES, *RESUMED]}, got {unknown}")
    trees = {"after": ROOT} if args.baseline_src is None else {
        "before": args.baseline_src.resolve(), "after": ROOT}  # fmt: skip
    results: dict[str, dict[str, Any]] = {which: {} for which in trees}
    for name in names:  # a process per case: no state carried from one run to the next
        for which, root in trees.items():
            results[which][name] = _run_in(root, name, args.pin)
            print(f"{which} {name}: {results[which][name]['weights'][:12]} "
                  f"{results[which][name]['seconds']}s", file=sys.stderr)  # fmt: skip
    if args.baseline_src is None:
        out: dict[str, Any] = results["after"]
    else:
        diffs = compare(results["before"], results["after"])
        out = {**results, "differences": diffs}
    text = json.dumps(out, indent=2)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")
    if args.baseline_src is not None and out["differences"]:
        sys.exit(1)


def _run_in(root: Path, name: str, pins: list[str]) -> dict[str, Any]:
    """Case ``name`` of this script in a child process on the tree at ``root`` (its packages
    first on the path), with ``pins`` (FIELD=VALUE) set."""
    env = dict(os.environ, PYTHONPATH=str(root))
    script = Path(__file__).resolve()
    proc = subprocess.run(
        [sys.executable, str(script), "--case", name, *(["--pin", *pins] if pins else [])],
        capture_output=True, text=True, cwd=root, env=env,
    )  # fmt: skip
    if proc.returncode != 0:
        sys.exit(f"{name} ({root}): failed (exit status {proc.returncode})\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    main()

"""Steps that change nothing, in demos and in a trained policy's play; prints one JSON object.

python benchmarks/bench_demo_loops.py --demos demos/human-style/MiniGrid-DoorKey-8x8-v0 ...
    Per demo folder: its steps, how many changed nothing (the next observation the same,
    no reward, the episode went on: what --demo-unchanged-steps skip leaves out), by action,
    and how many open each episode.
python benchmarks/bench_demo_loops.py --checkpoints RUN/checkpoints/step-N.pt ... [--episodes 10]
    Per checkpoint: its greedy policy's episodes (reset seeds --seed, --seed + 1, ...): the
    success rate, the share of its steps that changed nothing (a greedy recurrent policy in
    such a step has only its own state to tell it apart from the one before), by action,
    and at each episode's first observation how often the greedy action changes nothing
    and the mean gap between the best such action's value and the best other one's.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from agents.core.restore import restore_agent
from agents.core.unchanged import unchanged_steps
from demostudio.episode import find_episodes, load_episode, read_summary


def _leaves(obs: Any) -> list[np.ndarray]:
    if isinstance(obs, dict):
        return [leaf for k in sorted(obs) for leaf in _leaves(obs[k])]
    return [np.asarray(obs)]


def _unchanged(obs: Any, nxt: Any, reward: float, ended: bool) -> bool:
    same = all(np.array_equal(a, b) for a, b in zip(_leaves(obs), _leaves(nxt)))
    return same and reward == 0 and not ended


def _named(counts: Counter, names: list[str] | None) -> dict[str, int]:
    return {(names[a] if names else str(a)): n for a, n in sorted(counts.items())}


def demo_folder(folder: Path) -> dict[str, Any]:
    steps, by_action, opening = 0, Counter(), []
    names = None
    for path in find_episodes([folder]):
        e = load_episode(path)
        names = list(read_summary(path).action_meanings or []) or None
        still = unchanged_steps(e)
        actions = np.asarray(e.actions).reshape(len(e))
        steps += len(e)
        by_action.update(actions[still].tolist())
        busy = np.flatnonzero(~still)
        opening.append(int(busy[0]) if busy.size else len(e))
    total = sum(by_action.values())
    return {
        "demos": str(folder), "episodes": len(opening), "steps": steps, "unchanged": total,
        "unchanged_share": total / max(steps, 1), "unchanged_by_action": _named(by_action, names),
        "opening_unchanged": opening,
    }  # fmt: skip


def checkpoint_play(path: Path, episodes: int, seed: int) -> dict[str, Any]:
    agent = restore_agent(path)
    policy, preprocess = agent.controller.policy, agent.controller.preprocess
    env = agent.make_env()
    names = list(env.unwrapped.actions.__members__) if hasattr(env.unwrapped, "actions") else None
    steps, wins, by_action, first_still, gaps = 0, 0, Counter(), 0, []
    try:
        for ep in range(episodes):
            obs, _ = env.reset(seed=seed + ep)
            policy.reset()
            last = None
            for t in range(1_000_000):
                if last is not None:
                    policy.observe(np.array([last[0]]), np.array([last[1]]))
                batch = {k: v[None] for k, v in preprocess.one(obs).items()}
                heads = policy.step_network(batch).heads  # Q values, or BC's logits
                q = next(iter(heads.values()))[0, 0].numpy()
                action = int(q.argmax())
                nxt, reward, term, trunc, _ = env.step(action)
                still = _unchanged(obs, nxt, reward, term or trunc)
                if t == 0:  # which actions change nothing here: try each on a copy
                    idle = _idle_actions(agent, seed + ep, len(q))
                    first_still += action in idle
                    if idle and len(idle) < len(q):
                        moves = [a for a in range(len(q)) if a not in idle]
                        gaps.append(float(q[idle].max() - q[moves].max()))
                steps += 1
                by_action[action] += still
                obs, last = nxt, (action, reward)
                if term or trunc:
                    wins += bool(term and reward > 0)
                    break
    finally:
        env.close()
    total = sum(by_action.values())
    return {
        "checkpoint": str(path), "counters": agent.counters, "episodes": episodes,
        "success": wins / episodes, "steps": steps, "unchanged_share": total / max(steps, 1),
        "unchanged_by_action": _named(+by_action, names),
        "first_action_unchanged": first_still / episodes,
        "first_gap_idle_minus_move": float(np.mean(gaps)) if gaps else None,
    }  # fmt: skip


def _idle_actions(agent, seed: int, n: int) -> list[int]:
    """The actions that change nothing at the first observation of reset ``seed``."""
    idle = []
    for a in range(n):
        env = agent.make_env()
        try:
            obs, _ = env.reset(seed=seed)
            nxt, reward, term, trunc, _ = env.step(a)
            idle += [a] if _unchanged(obs, nxt, reward, term or trunc) else []
        finally:
            env.close()
    return idle


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--demos", nargs="*", type=Path, default=[])
    ap.add_argument("--checkpoints", nargs="*", type=Path, default=[])
    ap.add_argument("--episodes", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1000)
    args = ap.parse_args()
    out = {
        "demos": [demo_folder(f) for f in args.demos],
        "checkpoints": [checkpoint_play(p, args.episodes, args.seed) for p in args.checkpoints],
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()

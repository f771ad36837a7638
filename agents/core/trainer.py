"""The shared training loop: actors fill the agent replay, the learner updates at a fixed
replay ratio from batches mixed by the algorithm's sources, with evaluation, checkpoints,
a progress bar, metrics.jsonl and TensorBoard."""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import gymnasium as gym
import numpy as np
import torch

from agents.core.actor import VectorActor
from agents.core.algorithm import Algorithm
from agents.core.checkpoint import (
    CheckpointError,
    latest_checkpoint,
    load_checkpoint,
    load_replays,
    periodic_path,
    prune_checkpoints,
    replay_path,
    save_checkpoint,
    save_replays,
)
from agents.core.config import CoreConfig, config_to_dict
from agents.core.evaluate import EvalResult, run_episodes
from agents.core.learner import Learner
from agents.core.logger import RunLogger
from agents.core.mixing import ReplayMix
from agents.core.networks import RecurrentQNetwork
from agents.core.policy import AgentController, BatchPolicy, epsilon_ladder
from agents.core.preprocess import Preprocessor, make_preprocessor, spec_to_json
from agents.core.replay import PrioritizedSequenceReplay
from agents.core.sequences import EndBehavior
from demostudio.episode import env_folder_name, make_env


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device: expected an available device, got cuda (torch sees no GPU)")
    return torch.device(name)


def default_run_dir(algo: str, cfg: CoreConfig) -> Path:
    return Path("runs") / f"{algo}-{env_folder_name(cfg.env)}-s{cfg.seed}"


@dataclass
class TrainContext:
    """Everything an algorithm hook may need."""

    cfg: CoreConfig
    env: gym.Env
    """A probe env (spaces only)."""
    preprocess: Preprocessor
    network: RecurrentQNetwork
    learner: Learner
    replay: PrioritizedSequenceReplay
    device: torch.device
    run_dir: Path
    extras: dict[str, object] = field(default_factory=dict)


class TrainResult(NamedTuple):
    run_dir: Path
    env_steps: int
    updates: int
    evals: list[tuple[int, float]]
    """(env steps, mean return) of each evaluation."""
    solved_at: int | None
    """Env steps of the first evaluation reaching ``stop_return`` (None if never)."""


def build_network(cfg: CoreConfig, env: gym.Env) -> tuple[Preprocessor, RecurrentQNetwork]:
    if not isinstance(env.action_space, gym.spaces.Discrete):
        raise ValueError(
            f"--env {cfg.env}: expected a Discrete action space, got {env.action_space}"
        )
    preprocess = make_preprocessor(env.observation_space)
    net = RecurrentQNetwork(
        preprocess.spec, int(env.action_space.n), cfg.hidden, cfg.lstm, cfg.recurrent
    )
    return preprocess, net


def checkpoint_payload(algo: Algorithm, ctx: TrainContext, counters: dict[str, int]) -> dict:
    return {
        "algo": algo.name,
        "config": config_to_dict(ctx.cfg),
        **ctx.learner.state_dict(),
        "obs_spec": spec_to_json(ctx.preprocess.spec),
        "num_actions": ctx.network.num_actions,
        "counters": dict(counters),
        "algo_state": algo.state_dict(),
    }


# fields that may change between a run and its resumption without comment
_RESUME_FREE = {"resume", "total_env_steps", "progress", "tensorboard", "device", "run_dir"}


def config_changes(saved: dict, cfg: CoreConfig) -> list[str]:
    """``field saved -> now`` for each config field that differs from the resumed run's."""
    now = config_to_dict(cfg)
    return [
        f"{k} {saved[k]!r} -> {v!r}"
        for k, v in now.items()
        if k not in _RESUME_FREE and k in saved and saved[k] != v
    ]


def restore_replays(ctx: TrainContext, mix: ReplayMix, env_steps: int) -> str:
    """Load checkpoints/replay.npz into the persistent buffers of ``mix`` when it belongs to
    the checkpoint being resumed (same env steps, same sequence length); returns what was
    done, for the log."""
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
    for buf in mix.buffers:
        state = arrays.get(buf.name)
        if not buf.persistent or state is None:
            continue
        length = state["action"].shape[1] if "action" in state else ctx.cfg.sequence_length
        if length != ctx.cfg.sequence_length:
            return (
                f"saved {buf.name} holds sequences of {length} steps, this run uses "
                f"{ctx.cfg.sequence_length}: the replay refills"
            )
        buf.load_state_arrays(state, str(replay_path(ctx.run_dir)))
        loaded.append(f"{buf.name} {len(buf)} sequences")
    return "restored " + ", ".join(loaded)


def evaluate_network(ctx: TrainContext, episodes: int, seed: int) -> EvalResult:
    env = make_env(ctx.cfg.env, ctx.cfg.make_kwargs())
    try:
        ctrl = AgentController(ctx.network, ctx.preprocess, ctx.cfg.eval_epsilon, ctx.device, seed)
        return run_episodes(env, ctrl, episodes, seed=seed)
    finally:
        env.close()
        ctx.network.train()


def train(cfg: CoreConfig, algo: Algorithm) -> TrainResult:
    cfg.validate()
    torch.set_num_threads(max(1, cfg.torch_threads))
    torch.manual_seed(cfg.seed)
    device = resolve_device(cfg.device)
    run_dir = Path(cfg.run_dir) if cfg.run_dir else default_run_dir(algo.name, cfg)
    env = make_env(cfg.env, cfg.make_kwargs())
    preprocess, network = build_network(cfg, env)
    learner = Learner(network, cfg, device, algo.loss_fn)
    counters = {"env_steps": 0, "updates": 0, "episodes": 0}
    previous = latest_checkpoint(run_dir)
    payload = None
    if cfg.resume:
        if previous is None:
            raise CheckpointError(
                run_dir, "--resume: expected a run folder with checkpoints, got none"
            )
        payload = load_checkpoint(previous, map_location=device)
        if payload["algo"] != algo.name or payload["config"].get("env") != cfg.env:
            raise CheckpointError(
                previous,
                f"--resume: expected a {algo.name} run on {cfg.env}, got a {payload['algo']} run "
                f"on {payload['config'].get('env')}",
            )
        learner.load_state_dict(payload)
        counters.update(payload["counters"])
    elif previous is not None:
        raise CheckpointError(
            run_dir,
            "expected a fresh run folder, got one with checkpoints "
            "(pass --resume or another --run-dir)",
        )
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.json").write_text(
        json.dumps({"algo": algo.name, **config_to_dict(cfg)}, indent=2), encoding="utf-8"
    )
    replay = PrioritizedSequenceReplay(
        cfg.replay_capacity,
        cfg.priority_alpha,
        cfg.priority_beta,
        cfg.priority_eta,
        cfg.seed,
        "agent replay",
    )
    ctx = TrainContext(cfg, env, preprocess, network, learner, replay, device, run_dir)
    mix = ReplayMix(replay, algo.extra_sources(ctx), seed=cfg.seed + 1)
    resume_note = None
    if payload is not None:
        resume_note = restore_replays(ctx, mix, counters["env_steps"])
        changes = config_changes(payload["config"], cfg)
        if changes:
            resume_note += "; config changed from the saved run: " + ", ".join(changes)
        algo.load_state_dict(payload.get("algo_state") or {})
    kwargs = cfg.make_kwargs()
    policy = BatchPolicy(
        network,
        preprocess,
        epsilon_ladder(cfg.num_actors, cfg.epsilon_base, cfg.epsilon_alpha),
        device,
        np.random.default_rng(cfg.seed + 2),
    )
    actor = VectorActor(
        [lambda: make_env(cfg.env, kwargs) for _ in range(cfg.num_actors)],
        policy,
        preprocess,
        cfg.sequence_length,
        cfg.period,
        EndBehavior(cfg.end_behavior),
        seed=cfg.seed + 1000 * counters["episodes"],
        keep_episodes=algo.keep_episodes(),
    )
    logger = RunLogger(run_dir, cfg.tensorboard)
    from tqdm import tqdm

    bar = tqdm(
        total=cfg.total_env_steps,
        initial=counters["env_steps"],
        desc=f"{algo.name} {cfg.env}",
        unit="step",
        disable=not cfg.progress,
        dynamic_ncols=True,
    )
    evals: list[tuple[int, float]] = []
    solved_at: int | None = None
    learn_from: tuple[int, int] | None = None  # (env steps, updates) when learning began
    recent_returns: list[float] = []
    stats: dict[str, list[float]] = {}
    next_log = counters["env_steps"] + 1000
    next_eval = counters["env_steps"] + cfg.eval_every if cfg.eval_every else math.inf
    next_ckpt = counters["env_steps"] + cfg.checkpoint_every
    t_log, steps_log, updates_log = time.perf_counter(), counters["env_steps"], learner.updates

    if resume_note is not None:
        logger.log("resume", counters["env_steps"], replay_items=len(replay), note=resume_note)
        if cfg.progress:
            bar.write(f"resumed at {counters['env_steps']} env steps; {resume_note}")

    def save(path: Path) -> None:
        counters["updates"] = learner.updates
        save_checkpoint(path, checkpoint_payload(algo, ctx, counters))
        if cfg.save_replay:
            buffers = {b.name: b.state_arrays() for b in mix.buffers if b.persistent}
            save_replays(run_dir, counters["env_steps"], buffers)

    def run_eval(env_steps: int) -> EvalResult:
        result = evaluate_network(ctx, cfg.eval_episodes, seed=cfg.seed + 10_000 + env_steps)
        evals.append((env_steps, result.mean))
        logger.log(
            "eval",
            env_steps,
            eval_return=result.mean,
            eval_success=result.success_rate,
            eval_length=float(np.mean(result.lengths)),
            updates=learner.updates,
        )
        if cfg.progress:
            bar.write(f"eval @ {env_steps} steps: mean return {result.mean:.2f}")
        return result

    try:
        while counters["env_steps"] < cfg.total_env_steps:
            step = actor.step()
            if step.sequences is not None:
                replay.add(step.sequences)
            counters["env_steps"] += step.env_steps
            bar.update(step.env_steps)
            for ep in step.finished:
                counters["episodes"] += 1
                recent_returns.append(ep.total_return)
                algo.on_episode(ctx, ep)
            if learn_from is None and mix.ready(cfg.min_replay):
                learn_from = (counters["env_steps"], learner.updates)
            if learn_from is not None:
                due = learn_from[1] + int(
                    (counters["env_steps"] - learn_from[0]) / cfg.env_steps_per_update
                )
                while learner.updates < due:
                    sample = mix.sample(cfg.batch_size, counters["env_steps"])
                    metrics, td, mask = learner.update(sample)
                    mix.update_priorities(sample, td, mask)
                    metrics["demo_share"] = (
                        float(np.mean(sample.source == 1)) if mix.extras else 0.0
                    )
                    for k, v in metrics.items():
                        stats.setdefault(k, []).append(v)
            env_steps = counters["env_steps"]
            if env_steps >= next_log:
                now = time.perf_counter()
                row = {k: float(np.mean(v)) for k, v in stats.items()}
                row.update(
                    episode_return=float(np.mean(recent_returns))
                    if recent_returns
                    else float("nan"),
                    episodes=counters["episodes"],
                    updates=learner.updates,
                    sps=(env_steps - steps_log) / max(now - t_log, 1e-9),
                    ups=(learner.updates - updates_log) / max(now - t_log, 1e-9),
                    replay_size=len(replay),
                    **algo.metrics(ctx, env_steps),
                )
                logger.log("train", env_steps, **row)
                bar.set_postfix(
                    ret=f"{row['episode_return']:.1f}", loss=f"{row.get('loss', 0):.3f}"
                )
                stats.clear()
                recent_returns = recent_returns[-10:]
                t_log, steps_log, updates_log = now, env_steps, learner.updates
                next_log = env_steps + 1000
            if env_steps >= next_eval:
                result = run_eval(env_steps)
                next_eval = env_steps + cfg.eval_every
                if cfg.stop_return is not None and result.mean >= cfg.stop_return:
                    solved_at = env_steps
                    break
            if env_steps >= next_ckpt:
                save(periodic_path(run_dir, env_steps))
                prune_checkpoints(run_dir, cfg.keep_checkpoints)
                next_ckpt = env_steps + cfg.checkpoint_every
        else:  # the budget is spent: every finished run ends with an evaluation
            if cfg.eval_every and (not evals or evals[-1][0] != counters["env_steps"]):
                run_eval(counters["env_steps"])
    finally:
        save(run_dir / "checkpoints" / "final.pt")
        bar.close()
        logger.close()
        actor.close()
        env.close()
    return TrainResult(run_dir, counters["env_steps"], learner.updates, evals, solved_at)


__all__ = [
    "TrainContext",
    "TrainResult",
    "build_network",
    "default_run_dir",
    "evaluate_network",
    "resolve_device",
    "train",
]

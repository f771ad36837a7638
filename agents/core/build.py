"""Building a run's parts from its config: the device, the env id, the memory check, the
networks (checked against the saved weights on --resume), the learner, the deployment gate,
the agent replay and the named data sources with their mix, the logger and config.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from agents.core import footprint
from agents.core.agent import Agent
from agents.core.config import (
    ActorProcsConfig,
    DemoConfig,
    InteractConfig,
    ReplayConfig,
    RunConfig,
    config_to_dict,
)
from agents.core.context import EnvInfo, PoolSettings, RunContext
from agents.core.evaluate import default_eval_epsilon
from agents.core.gate import DeployGate
from agents.core.learner import Learner, Optim
from agents.core.logger import RunLogger
from agents.core.mixing import DataSource, LinearSchedule, ReplayMix
from agents.core.preprocess import make_preprocessor
from agents.core.replay import PrioritizedSequenceReplay
from agents.core.resume import build_networks, load_learner, resume_note
from agents.core.sequences import EndBehavior
from demostudio.episode import ensure_registered, find_episodes, read_summary


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device: expected an available device, got cuda (torch sees no GPU)")
    return torch.device(name)


def resolve_env(cfg: Any) -> str:
    """``cfg.env``, or the one env every demo was recorded on when ``--env`` is not given
    (set into ``cfg``); ValueError otherwise. The id is checked to be registered."""
    if not cfg.env:
        demos = tuple(cfg.demos or ()) if isinstance(cfg, DemoConfig) else ()
        ids = set()
        if demos and not cfg.demo_env_override:
            files = find_episodes(list(demos))
            if not files:
                raise ValueError(
                    f"--demos {' '.join(map(str, demos))}: expected episode files (*.h5) to "
                    f"take the env from, found none (or give --env)"
                )
            ids = {read_summary(p).env_id for p in files}
        if len(ids) != 1:
            found = f"demos of {sorted(ids)}" if ids else "none"
            raise ValueError(
                f"--env: expected a Gymnasium env id (or demos all recorded on one env), "
                f"got {found}"
            )
        cfg.env = ids.pop()
    ensure_registered(cfg.env)
    return cfg.env


def build_run(agent: Agent, env: gym.Env, run_dir: Path, device: torch.device,
           payload: dict | None) -> tuple[RunContext, str | None]:  # fmt: skip
    cfg = agent.cfg
    if not isinstance(env.action_space, gym.spaces.Discrete):
        raise ValueError(
            f"--env {cfg.env}: expected a Discrete action space, got {env.action_space}"
        )
    info = EnvInfo(cfg.env, env, make_preprocessor(env.observation_space))
    agent.configure(info)
    if isinstance(cfg, RunConfig) and cfg.eval_epsilon is None:
        cfg.eval_epsilon = default_eval_epsilon(info.preprocess.spec)
    check_memory(agent, info)
    networks = build_networks(agent, info, run_dir, payload)
    learner = Learner(networks, device, agent.loss(), agent.target_rules(),
                      agent.param_groups(networks), optim=Optim.of(cfg))  # fmt: skip
    ctx = RunContext(config_to_dict(cfg), agent, env, info, learner, device, run_dir, None)
    ctx.pool_settings = pool_settings(cfg) if isinstance(cfg, InteractConfig) else None
    ctx.rng = np.random.default_rng(cfg.seed + 3)
    if payload is not None:
        load_learner(agent, learner, run_dir, payload)
        ctx.counters.load(payload["counters"])
    if isinstance(cfg, InteractConfig) and cfg.gate_episodes:
        ctx.gate = DeployGate(cfg.gate_episodes, cfg.gate_margin, cfg.gate_share, cfg.gate_horizon)
        if payload is not None:
            ctx.gate.load_state_dict(payload, ctx.acting_weights())
    if agent.uses_replay:
        ctx.replay = PrioritizedSequenceReplay(
            cfg.replay_capacity, cfg.priority_alpha, cfg.priority_beta, cfg.priority_eta,
            cfg.seed, "agent replay", kind=cfg.replay_kind,
            uniform_share=cfg.replay_uniform_share,
        )  # fmt: skip
    sources = agent.sources(ctx)
    if ctx.replay is not None:
        sources = [DataSource("agent replay", ctx.replay), *sources]
    if sources:
        beta = None  # prioritized replay's exponent, annealed (--priority-beta-final)
        if isinstance(cfg, ReplayConfig):
            beta = LinearSchedule(cfg.priority_beta, cfg.priority_beta_final,
                                  cfg.priority_beta_steps)  # fmt: skip
        ctx.mix = ReplayMix(sources[0], sources[1:], seed=cfg.seed + 1, beta=beta)
    note = resume_note(ctx, agent, payload) if payload is not None else None
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.json").write_text(
        json.dumps({"algo": agent.name, **ctx.config}, indent=2), encoding="utf-8"
    )
    ctx.logger = RunLogger(run_dir, cfg.tensorboard)
    return ctx, note


def pool_settings(cfg: Any) -> PoolSettings:
    """The actor pool's settings from the config of a run that steps envs (every such
    algorithm's config answers ``num_actors``, ``sequence_length``, ``period`` and
    ``end_behavior``, as fields or properties)."""
    procs = cfg.group(ActorProcsConfig) if isinstance(cfg, ActorProcsConfig) else None
    return PoolSettings(
        cfg.num_actors, cfg.sequence_length, cfg.period, EndBehavior(cfg.end_behavior),
        cfg.seed, cfg.torch_threads, cfg.progress, procs,
    )  # fmt: skip


def check_memory(agent: Agent, info: EnvInfo) -> None:
    """ValueError naming the flag when the replay buffers, the networks (counted on the meta
    device) and a batch would need more memory than the machine has available. The demo
    files are read for their lengths only when the run does not fit with the demo replay
    counted at --demo-capacity (they are read again when loaded)."""
    params = footprint.meta_parameter_count(lambda: agent.build_networks(info))
    available = footprint.available_memory()

    def parts(count_demos: bool) -> list[footprint.Part]:
        sizes = agent.memory_sizes(count_demos)
        return footprint.estimate(sizes, info.preprocess.spec, info.num_actions, params)

    try:
        footprint.check_fits(parts(count_demos=False), available)
    except ValueError:
        footprint.check_fits(parts(count_demos=True), available)


__all__ = ["build_run", "check_memory", "pool_settings", "resolve_device", "resolve_env"]

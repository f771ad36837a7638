"""A trained agent back from a checkpoint, as a Controller ready to play: the checkpoint
names its algorithm (looked up in :mod:`agents.registry`) and its networks' specs, so any
registered agent is rebuilt from the file alone."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np
import torch

from agents.core.checkpoint import CheckpointError, build_checked, check_weights, load_checkpoint
from agents.core.config import config_from_dict
from agents.core.controller import AgentController
from agents.core.evaluate import default_eval_epsilon
from agents.core.gate import deployed_summary, deployed_weights
from agents.core.networks import NetworkSpec, RecurrentNetwork
from agents.core.policy import BatchPolicy
from agents.core.preprocess import ObsSpec, Preprocessor, obs_spec
from agents.registry import algorithm_names, get_algorithm
from demostudio.episode import EnvKwargsError, UnknownEnvError


class RestoredAgent(NamedTuple):
    controller: AgentController
    make_env: Callable[..., gym.Env]
    """``make_env(render_mode=None)``: an env as the agent was trained on (its wrappers)."""
    env_id: str
    env_kwargs: dict[str, Any]
    algo: str
    counters: dict[str, int]
    path: str
    interrupted: bool = False
    """The checkpoint is the state a Ctrl-C stopped its run in (``--resume`` continues it)."""
    deployed: tuple[int, float, bool] | None = None
    """``(learner updates, worst test episode, passed)`` of the deployed network it plays when
    its run had a deployment gate (``--gate-episodes``; passed False: provisional, no network
    had passed a test); None: it plays the learner's last weights."""


def restore_agent(
    path: str | os.PathLike,
    device: str | torch.device = "cpu",
    epsilon: float | None = None,
    seed: int | None = None,
) -> RestoredAgent:
    """The agent a checkpoint holds, playing with exploration ``epsilon`` (None: its run's
    ``--eval-epsilon``, so it plays as the run's evaluations did)."""
    # Playing steps one small network a step at a time: torch's default of a thread per core
    # only adds contention (and collapses on a busy machine), as training found
    torch.set_num_threads(1)
    payload = load_checkpoint(path, map_location=device)
    where = payload["path"]
    algo = str(payload["algo"])
    if algo not in algorithm_names():
        raise CheckpointError(where, f"algo: expected one of {algorithm_names()}, got {algo!r}")
    agent_cls = get_algorithm(algo).agent_cls
    try:
        agent = agent_cls(config_from_dict(agent_cls.config_cls, payload["config"]))
        acting = str(payload.get("acting_network", agent.acting_network))
        spec = NetworkSpec.from_json(payload["network_specs"][acting])
        nets = build_checked(where, lambda: {acting: RecurrentNetwork(spec)}, payload["networks"])
        net = nets[acting]
        deployed = deployed_weights(payload)  # the deployment gate's choice, when it made one
        if deployed is not None:
            check_weights(where, net, deployed, "deployed.weights")
        net.load_state_dict(payload["networks"][acting] if deployed is None else deployed)
        env_kwargs = agent.cfg.make_kwargs()
        env_id = str(payload["config"]["env"])
    except CheckpointError:
        raise
    except (KeyError, RuntimeError, TypeError, ValueError) as exc:
        why = " ".join(str(exc).split())[:300]  # torch's errors span lines
        raise CheckpointError(
            where, f"expected network weights matching its spec and config, got {why}"
        ) from None
    check_env(where, agent, env_id, spec)
    if epsilon is None:
        epsilon = run_eval_epsilon(where, agent.cfg.eval_epsilon, spec.obs_spec)
    device = torch.device(device)
    policy = BatchPolicy(
        net.requires_grad_(False), agent.eval_selector(epsilon), 1, device,
        np.random.default_rng(seed),
    )  # fmt: skip
    preprocess = Preprocessor(spec.obs_spec, is_dict=list(spec.obs_spec) != ["obs"])
    ctrl = AgentController(policy, preprocess, name=f"policy:{algo}")
    return RestoredAgent(
        ctrl, agent.make_env, env_id, env_kwargs, algo, dict(payload["counters"]), where,
        payload.get("interrupted") is True,
        None if deployed is None else deployed_summary(payload),
    )  # fmt: skip


def run_eval_epsilon(where: str, saved: Any, spec: ObsSpec) -> float:
    """A checkpoint's ``eval_epsilon``: the saved value, checked, or the default for its
    observations when its config has none."""
    if saved is None:
        return default_eval_epsilon(spec)
    if isinstance(saved, bool) or not isinstance(saved, (int, float)) or not 0 <= saved <= 1:
        expected = f"expected a number in [0, 1], got {saved!r}"
        raise CheckpointError(where, expected, "config.eval_epsilon")
    return float(saved)


def check_env(where: str, agent: Any, env_id: str, spec: NetworkSpec) -> None:
    """The checkpoint's env (its config's ``env`` and ``env_kwargs``) made once, before any
    episode: the env's refusal of the kwargs, or spaces other than the network's (CartPole
    weights on MountainCar would fail mid-episode with torch's size-mismatch traceback), is
    one CheckpointError line naming the field."""
    try:
        env = agent.make_env()
    except EnvKwargsError as exc:
        raise CheckpointError(where, exc.reason, "env_kwargs") from None
    except UnknownEnvError as exc:
        raise CheckpointError(where, str(exc), "env") from None
    try:
        actions = env.action_space
        n = int(actions.n) if isinstance(actions, gym.spaces.Discrete) else None
        try:
            leaves: ObsSpec | None = obs_spec(env.observation_space)
        except TypeError:
            leaves = None
    finally:
        env.close()
    fits = leaves is not None and all(leaves.get(k) == v for k, v in spec.obs_spec.items())
    if n != spec.num_actions or not fits:
        got = f"{_spaces(leaves, n)}" if leaves is not None else str(env.observation_space)[:80]
        raise CheckpointError(
            where,
            f"expected an env whose observation and action spaces match the network's "
            f"({_spaces(spec.obs_spec, spec.num_actions)}), got {env_id!r:.80} ({got:.200})",
            "env",
        )


def _spaces(leaves: ObsSpec, actions: int | None) -> str:
    """``obs: vector (4,); 2 actions``: what a network reads and chooses among."""
    obs = ", ".join(f"{k}: {v.kind} {v.shape}" for k, v in leaves.items())
    return f"{obs}; " + ("no discrete actions" if actions is None else f"{actions} actions")


__all__ = ["RestoredAgent", "check_env", "restore_agent"]

"""A trained agent back from a checkpoint, as a Controller ready to play."""

from __future__ import annotations

import json
import os
from typing import Any, NamedTuple

import torch

from agents.core.checkpoint import CheckpointError, load_checkpoint
from agents.core.networks import RecurrentQNetwork
from agents.core.policy import AgentController
from agents.core.preprocess import Preprocessor, spec_from_json


class RestoredAgent(NamedTuple):
    controller: AgentController
    env_id: str
    env_kwargs: dict[str, Any]
    algo: str
    counters: dict[str, int]
    path: str


def restore_agent(
    path: str | os.PathLike,
    device: str | torch.device = "cpu",
    epsilon: float = 0.0,
    seed: int | None = None,
) -> RestoredAgent:
    payload = load_checkpoint(path, map_location=device)
    cfg = payload["config"]
    try:
        spec = spec_from_json(payload["obs_spec"])
        net = RecurrentQNetwork(
            spec,
            int(payload["num_actions"]),
            int(cfg["hidden"]),
            int(cfg["lstm"]),
            bool(cfg.get("recurrent", True)),
        )
        net.load_state_dict(payload["network"])
    except (KeyError, RuntimeError, TypeError) as exc:
        raise CheckpointError(
            payload["path"], f"expected network weights matching its config, got {exc}"
        ) from None
    preprocess = Preprocessor(spec, is_dict=list(spec) != ["obs"])
    ctrl = AgentController(
        net.to(device), preprocess, epsilon, device, seed, name=f"policy:{payload['algo']}"
    )
    return RestoredAgent(
        ctrl,
        str(cfg["env"]),
        json.loads(cfg.get("env_kwargs") or "{}"),
        str(payload["algo"]),
        dict(payload["counters"]),
        payload["path"],
    )


__all__ = ["RestoredAgent", "restore_agent"]

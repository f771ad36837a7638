"""Behaviour cloning wiring: demo episodes split into train/validation episodes, cut into
the core's sequences, minibatch cross-entropy with early stopping on the validation loss,
evaluation in the env, and a checkpoint that ``evaluate``/``watch`` restore like any other.

BC never steps an env to learn: its metrics rows carry ``env_steps`` 0 and ``updates``
(TensorBoard's x axis is updates).
"""

from __future__ import annotations

import copy
import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.bc.config import BCConfig
from agents.bc.learning import bc_loss
from agents.bc.split import EarlyStopping, split_episodes
from agents.core.checkpoint import CheckpointError, latest_checkpoint, save_checkpoint
from agents.core.config import config_to_dict
from agents.core.demos import DemoSet, demo_sequences, load_demos
from agents.core.evaluate import EvalResult, run_episodes
from agents.core.learner import to_torch
from agents.core.logger import RunLogger
from agents.core.mixing import MixedSample
from agents.core.networks import RecurrentQNetwork
from agents.core.policy import AgentController
from agents.core.preprocess import Preprocessor, spec_to_json
from agents.core.replay import PrioritizedSequenceReplay
from agents.core.sequences import EndBehavior, SequenceBatch
from agents.core.trainer import TrainResult, build_network, resolve_device
from demostudio.episode import env_folder_name, make_env

VAL_CHUNK = 256
"""Validation sequences per forward pass."""


class BCLogger:
    """metrics.jsonl rows (``env_steps`` 0, ``updates`` n) and TensorBoard over updates."""

    def __init__(self, run_dir: Path, tensorboard: bool):
        self.rows = RunLogger(run_dir, tensorboard=False)
        self.tb = None
        if tensorboard:
            from torch.utils.tensorboard import SummaryWriter

            self.tb = SummaryWriter(str(run_dir / "tb"))

    def log(self, kind: str, updates: int, **values: float) -> None:
        self.rows.log(kind, 0, updates=updates, **values)
        if self.tb is not None:
            for k, v in values.items():
                if not math.isnan(v):
                    self.tb.add_scalar(f"{kind}/{k}", v, updates)

    def close(self) -> None:
        self.rows.close()
        if self.tb is not None:
            self.tb.close()


class BCTrainer:
    """Holds the network, optimizer and demo sequences of one behaviour-cloning run."""

    def __init__(self, cfg: BCConfig, preprocess: Preprocessor, network: RecurrentQNetwork,
                 device: torch.device):  # fmt: skip
        self.cfg = cfg
        self.preprocess = preprocess
        self.network = network.to(device)
        self.device = device
        self.optimizer = torch.optim.Adam(network.parameters(), lr=cfg.learning_rate)
        self.updates = 0

    def cut(self, demos: DemoSet) -> SequenceBatch:
        """Sequences of ``demos`` with stored LSTM states from the current network."""
        return demo_sequences(
            demos,
            self.preprocess,
            self.network,
            self.cfg.sequence_length,
            self.cfg.period,
            EndBehavior(self.cfg.end_behavior),
            self.device,
        )

    def sampler(self, seqs: SequenceBatch) -> PrioritizedSequenceReplay:
        """Uniform sampling (alpha 0) over ``seqs``."""
        buf = PrioritizedSequenceReplay(len(seqs), 0.0, 0.0, seed=self.cfg.seed + self.updates)
        buf.add(seqs)
        return buf

    def step(self, batch: SequenceBatch) -> dict[str, float]:
        ones = np.ones(len(batch), np.float32)
        zeros = np.zeros(len(batch), np.int64)
        tb = to_torch(MixedSample(batch, ones, zeros, zeros), self.device)
        out = bc_loss(self.network, tb, self.cfg.burn_in)
        self.optimizer.zero_grad(set_to_none=True)
        out.loss.backward()
        grad = torch.nn.utils.clip_grad_norm_(self.network.parameters(), self.cfg.max_grad_norm)
        self.optimizer.step()
        self.updates += 1
        return {
            "loss": float(out.loss.detach()),
            "accuracy": float(out.correct / out.steps.clamp(min=1)),
            "grad_norm": float(grad),
        }

    @torch.no_grad()
    def validate(self, seqs: SequenceBatch) -> tuple[float, float]:
        """Mean cross-entropy and accuracy over every learned step of ``seqs``."""
        total, correct, steps = 0.0, 0.0, 0.0
        for lo in range(0, len(seqs), VAL_CHUNK):
            idx = np.arange(lo, min(lo + VAL_CHUNK, len(seqs)))
            part = SequenceBatch(
                obs={k: v[idx] for k, v in seqs.obs.items()},
                **{n: getattr(seqs, n)[idx] for n in SequenceBatch._fields if n != "obs"},
            )
            ones = np.ones(len(idx), np.float32)
            tb = to_torch(MixedSample(part, ones, np.zeros(len(idx), np.int64), idx), self.device)
            out = bc_loss(self.network, tb, self.cfg.burn_in)
            total += float(out.loss) * float(out.steps)
            correct += float(out.correct)
            steps += float(out.steps)
        return total / max(steps, 1.0), correct / max(steps, 1.0)

    def evaluate(self, episodes: int, seed: int) -> EvalResult:
        env = make_env(self.cfg.env, self.cfg.make_kwargs())
        try:
            ctrl = AgentController(
                self.network, self.preprocess, self.cfg.eval_epsilon, self.device, seed,
                name="policy:bc",
            )  # fmt: skip
            return run_episodes(env, ctrl, episodes, seed=seed)
        finally:
            env.close()
            self.network.train()

    def payload(self) -> dict[str, Any]:
        return {
            "algo": "bc",
            "config": config_to_dict(self.cfg),
            "network": self.network.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "updates": self.updates,
            "obs_spec": spec_to_json(self.preprocess.spec),
            "num_actions": self.network.num_actions,
            "counters": {"env_steps": 0, "updates": self.updates, "episodes": 0},
        }


def default_bc_run_dir(cfg: BCConfig) -> Path:
    return Path("runs") / f"bc-{env_folder_name(cfg.env)}-s{cfg.seed}"


def train_bc(cfg: BCConfig) -> TrainResult:
    """Train on the demos until early stopping (or ``max_updates``), keep the weights with
    the best validation loss, evaluate them in the env and save ``checkpoints/final.pt``."""
    cfg.validate()
    torch.set_num_threads(max(1, cfg.torch_threads))
    torch.manual_seed(cfg.seed)
    device = resolve_device(cfg.device)
    run_dir = Path(cfg.run_dir) if cfg.run_dir else default_bc_run_dir(cfg)
    if latest_checkpoint(run_dir) is not None:
        raise CheckpointError(
            run_dir,
            "expected a fresh run folder, got one with checkpoints (pass another --run-dir)",
        )
    env = make_env(cfg.env, cfg.make_kwargs())
    try:
        preprocess, network = build_network(cfg, env)  # reads env, hidden, lstm, recurrent
        demos = load_demos(cfg.demos, cfg.env, env, cfg.demo_env_override)
    finally:
        env.close()
    split = split_episodes(demos, cfg.val_fraction, cfg.seed)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.json").write_text(
        json.dumps({"algo": "bc", **config_to_dict(cfg)}, indent=2), encoding="utf-8"
    )
    trainer = BCTrainer(cfg, preprocess, network, device)
    logger = BCLogger(run_dir, cfg.tensorboard)
    logger.rows.log(
        "split", 0, train_episodes=len(split.train.paths), val_episodes=len(split.val.paths),
        train_steps=split.train.steps, val_steps=split.val.steps,
    )  # fmt: skip
    sampler = trainer.sampler(trainer.cut(split.train))
    val_seqs = trainer.cut(split.val) if split.val.paths else None
    stopper = EarlyStopping(cfg.patience if val_seqs is not None else 0, cfg.min_delta)
    best_state = copy.deepcopy(network.state_dict())
    evals: list[tuple[int, float]] = []
    stats: dict[str, list[float]] = {}
    from tqdm import tqdm

    bar = tqdm(total=cfg.max_updates, desc=f"bc {cfg.env}", unit="upd", disable=not cfg.progress)
    t0 = time.perf_counter()
    stopped_early = False
    try:
        while trainer.updates < cfg.max_updates:
            u = trainer.updates
            if cfg.recurrent and cfg.state_refresh_every and u and u % cfg.state_refresh_every == 0:
                sampler = trainer.sampler(trainer.cut(split.train))  # fresh stored states
                val_seqs = trainer.cut(split.val) if val_seqs is not None else None
            for k, v in trainer.step(sampler.sample(cfg.batch_size).batch).items():
                stats.setdefault(k, []).append(v)
            bar.update(1)
            u = trainer.updates
            if u % cfg.val_every == 0:
                row = {k: float(np.mean(v)) for k, v in stats.items()}
                row["ups"] = u / max(time.perf_counter() - t0, 1e-9)
                logger.log("train", u, **row)
                stats.clear()
                if val_seqs is not None:
                    val_loss, val_acc = trainer.validate(val_seqs)
                    if stopper.update(val_loss):
                        best_state = copy.deepcopy(network.state_dict())
                    logger.log("val", u, val_loss=val_loss, val_accuracy=val_acc,
                               best_val_loss=stopper.best)  # fmt: skip
                    bar.set_postfix(val_loss=f"{val_loss:.3f}", acc=f"{val_acc:.2f}")
                    if stopper.should_stop:
                        stopped_early = True
                        break
            if cfg.eval_every and u % cfg.eval_every == 0 and u < cfg.max_updates:
                result = trainer.evaluate(cfg.eval_episodes, cfg.seed + 10_000 + u)
                evals.append((0, result.mean))
                logger.log("eval", u, eval_return=result.mean, eval_success=result.success_rate)
        if val_seqs is None:
            best_state = copy.deepcopy(network.state_dict())
        network.load_state_dict(best_state)
        result = trainer.evaluate(cfg.eval_episodes, cfg.seed + 10_000)
        evals.append((0, result.mean))
        logger.log(
            "eval", trainer.updates, eval_return=result.mean, eval_success=result.success_rate,
            eval_length=float(np.mean(result.lengths)), best_val_loss=stopper.best,
            stopped_early=float(stopped_early),
        )  # fmt: skip
        bar.write(
            f"bc: {trainer.updates} updates"
            + (f", early stop (best val loss {stopper.best:.4f})" if stopped_early else "")
            + f"; eval mean return {result.mean:.2f}"
        )
    finally:
        save_checkpoint(run_dir / "checkpoints" / "final.pt", trainer.payload())
        bar.close()
        logger.close()
    return TrainResult(run_dir, 0, trainer.updates, evals, None)


__all__ = ["BCLogger", "BCTrainer", "train_bc"]

"""The recurrent on-policy actor-critic that PPO and RND-PPO share (:class:`OnPolicyActorCritic`):
PPO's clipped objective on rollouts of whole segments, with RND's intrinsic reward when
``--intrinsic`` is on (RND-PPO's default; PPO's is off) and BC on demos with ``--demos``.

=================== ======================================================================
networks            ``main``: torso + ``logits`` + ``value_ext`` (+ ``value_int``) heads,
                    its vector input standardised by random steps with
                    --policy-obs-norm-steps (:mod:`agents.core.obs_norm`);
                    ``rnd_target`` (frozen) and ``rnd_predictor`` (RND only)
optimiser           Adam groups: policy (torso + logits) at --lr-policy, value heads at
                    --lr-value, predictor at --lr-predictor; clip at --max-grad-norm
acting              the epsilon mixture over the policy; extras log mu, values, env index
phases              [pretrain: BC on the demos (with --demos)] then train: OnPolicy
                    (rollouts of --rollout-length per env, --update-epochs over
                    --num-minibatches of whole segments)
on_rollout          intrinsic rewards, GAE for both heads, observation statistics
                    (:mod:`agents.rnd_ppo.rollout`)
start               observation statistics from random-policy steps (a fresh run)
after_iteration     stop once a rollout's mean extrinsic return reaches the target
state_dict          observation and intrinsic-return statistics (networks and optimiser
                    are the learner's), so a resumed run continues exactly
=================== ======================================================================

With ``--intrinsic`` off there are no RND networks and no intrinsic head, and the
advantage is the extrinsic one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from agents.core.agent import Agent, EnvInfo, Phase
from agents.core.batch import LearnerView, Loss, LossOutput, TorchBatch, to_torch, uniform_sample
from agents.core.demos import context_demos, demo_sequences
from agents.core.losses import episode_starts
from agents.core.mixing import DataSource, LinearSchedule
from agents.core.networks import HeadSpec, NetworkSpec, RecurrentNetwork
from agents.core.obs_norm import random_policy_observations
from agents.core.policy import EpsilonGreedy, Selector
from agents.core.preprocess import ObsSpec, Preprocessor
from agents.core.replay import PrioritizedSequenceReplay
from agents.core.run import RunContext
from agents.core.schedules import Offline, OnPolicy
from agents.core.sequences import EndBehavior, SequenceBatch, with_extras
from agents.rnd_ppo.acting import LOGITS, BehaviourSample
from agents.rnd_ppo.atari import make_env
from agents.rnd_ppo.config import RNDPPOConfig
from agents.rnd_ppo.full_grid import FULL_GRID, FullGridObservation, policy_spec
from agents.rnd_ppo.learning import bc_terms, ppo_terms, predictor_terms, rnd_input
from agents.rnd_ppo.rnd import IntrinsicReward
from agents.rnd_ppo.rollout import rollout_targets, scale_by_stream

PRETRAIN = "pretrain"


def rnd_leaf(cfg: RNDPPOConfig, info: EnvInfo) -> str:
    """The observation leaf the RND networks read: the whole grid with --rnd-full-grid,
    --rnd-leaf, the only leaf, or the only image/grid leaf."""
    if cfg.rnd_full_grid:
        return FULL_GRID
    spec = info.preprocess.spec
    if cfg.rnd_leaf:
        if cfg.rnd_leaf not in spec:
            raise ValueError(f"--rnd-leaf: expected one of {sorted(spec)}, got {cfg.rnd_leaf!r}")
        return cfg.rnd_leaf
    if len(spec) == 1:
        return next(iter(spec))
    images = [k for k, leaf in spec.items() if leaf.kind in ("frame", "grid")]
    if len(images) != 1:
        raise ValueError(
            f"--rnd-leaf: expected a leaf name for observations of {sorted(spec)}, got none"
        )
    return images[0]


class OnPolicyActorCritic(Agent):
    """Recurrent PPO, with RND's intrinsic reward when the config's ``intrinsic`` is on
    (the registered algorithms, :class:`agents.rnd_ppo.agent.PPO` and
    :class:`agents.rnd_ppo.agent.RNDPPO`, differ by that default)."""

    resume_by_default = True

    def __init__(self, cfg: RNDPPOConfig):
        super().__init__(cfg)
        self.irw: IntrinsicReward | None = None
        self.leaf = ""
        self.demos: PrioritizedSequenceReplay | None = None
        self.phase = ""
        self.generator = torch.Generator().manual_seed(cfg.seed + 5)
        self.rollout_returns: list[float] = []
        self.bc_schedule = LinearSchedule(cfg.bc_coef, 0.0, cfg.bc_anneal_steps)
        self.env_steps = 0

    # --- networks -------------------------------------------------------------------------
    def heads(self) -> dict[str, HeadSpec]:
        heads = {LOGITS: HeadSpec("logits"), "value_ext": HeadSpec("value")}
        if self.cfg.intrinsic:
            heads["value_int"] = HeadSpec("value")
        return heads

    def network_specs(self, env: EnvInfo) -> dict[str, NetworkSpec]:
        return {"main": self.main_spec(env, self.policy_obs_spec(env))}

    def policy_obs_spec(self, env: EnvInfo) -> ObsSpec:
        """The network's observation spec: the env's without the RND-only whole grid, then
        the core's (standardised with --policy-obs-norm-steps)."""
        return self.network_obs_spec(env, policy_spec(env.preprocess.spec))

    def build_networks(self, env: EnvInfo) -> dict[str, torch.nn.Module]:
        cfg = self.cfg
        nets: dict[str, torch.nn.Module] = {
            "main": RecurrentNetwork(self.network_specs(env)["main"])
        }
        if cfg.intrinsic:
            self.leaf = rnd_leaf(cfg, env)
            leaf = env.preprocess.spec[self.leaf]
            shape = tuple(rnd_input(torch.zeros(1, *leaf.shape), cfg.rnd_frame_stack).shape[1:])
            self.irw = IntrinsicReward(shape, cfg.total_envs, cfg.gamma_int, cfg.obs_norm_clip,
                                       cfg.rnd_embed_dim, cfg.rnd_hidden)  # fmt: skip
            nets["rnd_target"] = self.irw.rnd.target
            nets["rnd_predictor"] = self.irw.rnd.predictor
        return nets

    def param_groups(self, networks: Mapping[str, torch.nn.Module]) -> list[dict]:
        cfg = self.cfg
        policy, value = [], []
        for name, p in networks["main"].named_parameters():
            (value if name.startswith("heads.value_") else policy).append(p)
        groups = [{"params": policy, "lr": cfg.lr_policy}, {"params": value, "lr": cfg.lr_value}]
        if "rnd_predictor" in networks:
            groups.append(
                {"params": list(networks["rnd_predictor"].parameters()), "lr": cfg.lr_predictor}
            )
        return groups

    # --- environment ----------------------------------------------------------------------
    def build_env(self, render_mode: str | None = None) -> gym.Env:
        """ALE: the paper's frame skip, sticky actions, grey resized frames stacked
        --frame-stack deep; other envs: per-step sticky actions when asked. With
        --rnd-full-grid (RND only) MiniGrid's whole grid is added for the RND networks."""
        cfg = self.cfg
        env = make_env(cfg.env, cfg, cfg.make_kwargs(), render_mode)
        if cfg.intrinsic and cfg.rnd_full_grid:
            env = FullGridObservation(env, cfg.env)
        return env

    # --- acting ---------------------------------------------------------------------------
    def acting_selector(self, n: int) -> Selector:
        values = tuple(h for h in self.heads() if h.startswith("value_"))
        return BehaviourSample(n, self.cfg.epsilon_greedy, values)

    def eval_selector(self, epsilon: float) -> Selector:
        return EpsilonGreedy(np.array([epsilon]), head=LOGITS)

    # --- data and schedule ----------------------------------------------------------------
    def sources(self, ctx: RunContext) -> list[DataSource]:
        """The demo segments (with --demos): BC pre-training and the annealed BC loss."""
        cfg = self.cfg
        if not cfg.demos:
            return []
        preprocess, plain = ctx.preprocess, None
        if FULL_GRID in preprocess.spec:  # recorded without the RND-only leaf
            plain = make_env(cfg.env, cfg, cfg.make_kwargs())
            preprocess = Preprocessor(policy_spec(preprocess.spec), preprocess.is_dict)
        try:
            demos = context_demos(cfg, ctx, plain)
        finally:
            if plain is not None:
                plain.close()
        seqs = demo_sequences(demos, preprocess, ctx.network,
                              cfg.sequence_length, cfg.period, EndBehavior.ZERO_PAD,
                              ctx.device)  # fmt: skip
        self.demos = PrioritizedSequenceReplay(len(seqs), 0.0, 0.0, seed=cfg.seed + 11,
                                               name="demos", persistent=False)  # fmt: skip
        self.demos.add(seqs)
        return [DataSource("demos", self.demos, demo=True)]

    def phases(self) -> list[Phase]:
        cfg = self.cfg
        rollout = cfg.rollout_length * cfg.total_envs
        train = Phase(
            "train",
            OnPolicy(
                cfg.rollout_length, cfg.update_epochs, cfg.minibatch_size, cfg.total_env_steps
            ),
            log_every=rollout,
            eval_every=cfg.eval_every,
            checkpoint_every=cfg.checkpoint_every,
        )
        if not (cfg.demos and cfg.bc_pretrain_updates):
            return [train]
        pretrain = Phase(
            PRETRAIN,
            Offline(cfg.bc_pretrain_updates, cfg.bc_batch_size),
            log_kind=PRETRAIN,
            log_every=max(1, cfg.bc_pretrain_updates // 10),
            end_checkpoint="pretrained.pt",
            eval_at_end=True,
        )
        return [pretrain, train]

    # --- learning -------------------------------------------------------------------------
    def loss(self) -> Loss:
        return self.learner_loss

    def learner_loss(self, learner: LearnerView, batch: TorchBatch) -> LossOutput:
        cfg, net = self.cfg, learner.networks["main"]
        if self.phase == PRETRAIN:
            bc, acc = bc_terms(net, batch)
            return LossOutput(
                bc, metrics={"bc_loss": float(bc.detach()), "bc_accuracy": float(acc)}
            )
        loss, metrics = ppo_terms(cfg, net, batch, self.irw is not None)
        if self.irw is not None:
            rnd = predictor_terms(self.irw, batch, self.leaf, cfg.rnd_frame_stack,
                                  cfg.update_proportion, self.generator)  # fmt: skip
            loss = loss + rnd
            metrics["rnd_loss"] = float(rnd.detach())
        coef = self.bc_schedule(self.env_steps) if self.demos is not None else 0.0
        if coef > 0:
            demo = to_torch(uniform_sample(self.demos.sample(cfg.bc_batch_size).batch),
                            learner.device)  # fmt: skip
            bc, _ = bc_terms(net, demo)
            loss = loss + coef * bc
            metrics.update(bc_loss=float(bc.detach()), bc_coef=coef)
        return LossOutput(loss, metrics=metrics)

    # --- hooks ----------------------------------------------------------------------------
    def on_phase_start(self, ctx: RunContext, phase: Phase) -> None:
        self.phase = phase.name

    def start(self, ctx: RunContext) -> None:
        """A fresh RND run: observation statistics from random-policy steps."""
        cfg = self.cfg
        if self.irw is None or self.irw.obs_norm.rms.count > 0 or not cfg.obs_norm_init_steps:
            return
        for obs in random_policy_observations(self.make_env, cfg.num_envs,
                                              cfg.obs_norm_init_steps, ctx.info.num_actions,
                                              cfg.seed):  # fmt: skip
            x = ctx.preprocess(obs)[self.leaf]
            self.irw.observe(rnd_input(torch.from_numpy(np.asarray(x)), cfg.rnd_frame_stack))
        ctx.logger.log("obs_norm_init", 0, random_steps=cfg.obs_norm_init_steps * cfg.num_envs)

    def on_episode(self, ctx: RunContext, episode) -> None:
        self.rollout_returns.append(episode.total_return)

    def on_rollout(self, ctx: RunContext, batch: SequenceBatch) -> SequenceBatch:
        cfg = self.cfg
        self.env_steps = ctx.counters["env_steps"]
        tb = to_torch(uniform_sample(batch), ctx.device)
        with torch.no_grad():
            out = ctx.network(tb.obs, tb.prev_action, tb.prev_reward, tb.state)
        s = tb.action.shape[0] - 1
        reward_int = value_int = None
        if self.irw is not None:
            real = batch.mask[:, :-1].T  # [S, B]
            nxt = rnd_input(tb.obs[self.leaf][1:], cfg.rnd_frame_stack)  # [S, B, ...]
            raw = self.irw.raw(nxt).cpu().numpy()
            env = batch.extras["env"][:, 0].astype(np.int64)
            scaled = scale_by_stream(self.irw.scaler, raw, real, env)
            reward_int = torch.from_numpy(scaled.astype(np.float32)).to(ctx.device)
            self.irw.observe(nxt[torch.from_numpy(real).to(ctx.device)])
            value_int = out.heads["value_int"]
            if real.any():
                ctx.record({"intrinsic_reward": float(scaled[real].mean()),
                            "intrinsic_raw": float(raw[real].mean())})  # fmt: skip
        start_int = None
        if value_int is not None:
            starts = episode_starts(tb)  # [B]
            if starts.any():
                start_int = float(value_int[0, starts].mean())
        t = rollout_targets(cfg, out.heads["value_ext"], value_int, tb.reward[:s],
                            tb.terminal[:s], tb.mask, reward_int, start_int)  # fmt: skip

        def bm(x: torch.Tensor) -> np.ndarray:  # [S, B] -> [B, S + 1] (last column 0)
            x = torch.cat([x, torch.zeros_like(x[:1])]).T
            return np.ascontiguousarray(x.cpu().numpy().astype(np.float32))

        extras = {"advantage": bm(t.advantage), "ret_ext": bm(t.ret_ext),
                  "value_ext": bm(t.value_ext)}  # fmt: skip
        if t.ret_int is not None:
            extras.update(ret_int=bm(t.ret_int), value_int=bm(t.value_int))
        return with_extras(batch, **extras)

    def after_iteration(self, ctx: RunContext) -> bool:
        target, returns = self.cfg.target_rollout_return, self.rollout_returns
        self.rollout_returns = []
        if self.phase == PRETRAIN or target is None or not returns:
            return False
        if float(np.mean(returns)) >= target:
            ctx.logger.log("target_reached", ctx.counters["env_steps"],
                           rollout_return=float(np.mean(returns)), target=target)  # fmt: skip
            return True
        return False

    def state_dict(self) -> dict[str, Any]:
        if self.irw is None:
            return {}
        return {"obs_norm": self.irw.obs_norm.state_dict(), "scaler": self.irw.scaler.state_dict()}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        if self.irw is None:
            return
        for key in ("obs_norm", "scaler"):
            if key not in state:
                raise ValueError(
                    f"agent_state: expected {key!r} (RND statistics), got {sorted(state)}"
                )
        self.irw.obs_norm.load_state_dict(state["obs_norm"])
        self.irw.scaler.load_state_dict(state["scaler"])


__all__ = ["OnPolicyActorCritic", "rnd_leaf"]

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
acting              the epsilon mixture over the policy (the core's SoftmaxSample); extras
                    log mu, values, env index
phases              [pretrain: BC on the demos (with --demos)] then train: OnPolicy
                    (rollouts of --rollout-length per env, --update-epochs over
                    --num-minibatches of whole segments)
configure           RND's observation leaf and statistics, once per run
                    (:mod:`agents.rnd_ppo.intrinsic`; the RND networks are the learner's)
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
from agents.core.context import RunContext
from agents.core.demos import DemoFiles, context_demos, demo_sequences
from agents.core.footprint import Rollout, Sizes
from agents.core.losses import episode_starts
from agents.core.mixing import DataSource, LinearSchedule
from agents.core.networks import HeadSpec, NetworkSpec, RecurrentNetwork
from agents.core.policy import EpsilonGreedy, Selector, SoftmaxSample
from agents.core.preprocess import ObsSpec, Preprocessor
from agents.core.replay import PrioritizedSequenceReplay
from agents.core.schedules import Offline, OnPolicy
from agents.core.sequences import EndBehavior, SequenceBatch, with_extras
from agents.rnd_ppo.acting import LOGITS
from agents.rnd_ppo.atari import make_env
from agents.rnd_ppo.config import RNDPPOConfig, rollout_budget
from agents.rnd_ppo.full_grid import FULL_GRID, FullGridObservation, policy_spec
from agents.rnd_ppo.intrinsic import PREDICTOR, RNDBonus, rnd_networks
from agents.rnd_ppo.learning import bc_terms, ppo_terms
from agents.rnd_ppo.rollout import rollout_targets

PRETRAIN = "pretrain"


class OnPolicyActorCritic(Agent):
    """Recurrent PPO, with RND's intrinsic reward when the config's ``intrinsic`` is on
    (the registered algorithms, :class:`agents.rnd_ppo.agent.PPO` and
    :class:`agents.rnd_ppo.agent.RNDPPO`, differ by that default)."""

    resume_by_default = True

    def __init__(self, cfg: RNDPPOConfig):
        super().__init__(cfg)
        self.bonus: RNDBonus | None = None
        """RND's statistics (with --intrinsic), made by :meth:`configure`."""
        self.demos: PrioritizedSequenceReplay | None = None
        self.phase = ""
        self.generator = torch.Generator().manual_seed(cfg.seed + 5)
        self.rollout_returns: list[float] = []
        self.bc_schedule = LinearSchedule(cfg.bc_coef, 0.0, cfg.bc_anneal_steps)
        self.env_steps = 0

    def configure(self, env: EnvInfo) -> None:
        """With --intrinsic: RND's leaf and statistics for this env."""
        if self.cfg.intrinsic:
            self.bonus = RNDBonus(self.cfg, env)

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
        """``main``, and with --intrinsic the RND target and predictor."""
        nets = {"main": RecurrentNetwork(self.network_specs(env)["main"])}
        if self.cfg.intrinsic:
            nets.update(rnd_networks(self.cfg, env))
        return nets

    def memory_sizes(self, count_demos: bool) -> Sizes:
        """Minibatches of whole segments, the rollout, and RND's two networks' widths."""
        cfg, sizes = self.cfg, super().memory_sizes(count_demos)
        rollout = f"--num-envs {cfg.num_envs}, --rollout-length {cfg.rollout_length}"
        return sizes._replace(
            widths=(*sizes.widths, ("rnd_embed_dim", cfg.rnd_embed_dim),
                    ("rnd_hidden", cfg.rnd_hidden)),
            extra_width=cfg.rnd_embed_dim + cfg.rnd_hidden,
            batch=cfg.minibatch_size,
            batch_flags=f"{rollout}, --num-minibatches {cfg.num_minibatches}",
            rollout=Rollout(cfg.total_envs, cfg.rollout_length + 1, rollout),
        )  # fmt: skip

    def param_groups(self, networks: Mapping[str, torch.nn.Module]) -> list[dict]:
        cfg = self.cfg
        policy, value = [], []
        for name, p in networks["main"].named_parameters():
            (value if name.startswith("heads.value_") else policy).append(p)
        groups = [{"params": policy, "lr": cfg.lr_policy}, {"params": value, "lr": cfg.lr_value}]
        if PREDICTOR in networks:
            groups.append(
                {"params": list(networks[PREDICTOR].parameters()), "lr": cfg.lr_predictor}
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
        eps = self.cfg.epsilon_greedy
        return SoftmaxSample(LOGITS, eps, ("log_prob",), values, env_index=np.arange(n))

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
            demos = context_demos(DemoFiles.of(cfg), ctx, plain)
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
            OnPolicy(  # the bar's total: the steps the whole rollouts take, never fewer
                cfg.rollout_length,
                cfg.update_epochs,
                cfg.minibatch_size,
                rollout_budget(cfg.total_env_steps, rollout),
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
        loss, metrics = ppo_terms(cfg, net, batch, self.bonus is not None)
        if self.bonus is not None:
            rnd = self.bonus.loss(learner.networks, batch, self.generator)
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
        if self.bonus is None:
            return
        steps = self.bonus.observe_random_steps(self.make_env, ctx.preprocess,
                                                ctx.info.num_actions)  # fmt: skip
        if steps:
            ctx.logger.log("obs_norm_init", 0, random_steps=steps)

    def on_episode(self, ctx: RunContext, episode) -> None:
        self.rollout_returns.append(episode.total_return)

    def on_rollout(self, ctx: RunContext, batch: SequenceBatch) -> SequenceBatch:
        cfg = self.cfg
        self.env_steps = ctx.counters.env_steps
        tb = to_torch(uniform_sample(batch), ctx.device)
        with torch.no_grad():
            out = ctx.network(tb.obs, tb.prev_action, tb.prev_reward, tb.state)
        s = tb.action.shape[0] - 1
        reward_int = value_int = None
        if self.bonus is not None:
            reward_int, metrics = self.bonus.rollout_rewards(ctx.learner.networks, tb, batch)
            value_int = out.heads["value_int"]
            if metrics:
                ctx.record(metrics)
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
            ctx.logger.log("target_reached", ctx.counters.env_steps,
                           rollout_return=float(np.mean(returns)), target=target)  # fmt: skip
            return True
        return False

    def state_dict(self) -> dict[str, Any]:
        return {} if self.bonus is None else self.bonus.state_dict()

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        if self.bonus is not None:
            self.bonus.load_state_dict(state)


__all__ = ["OnPolicyActorCritic"]

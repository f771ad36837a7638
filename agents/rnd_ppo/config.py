"""RND-PPO's config: its own groups (PPO, RND, Atari, demo pre-training; in
:mod:`agents.rnd_ppo.groups`) composed with the core's run, interaction, network-width and
demo groups into ONE flat dataclass
(:class:`RNDPPOConfig`; :class:`PPOConfig` is the same with the intrinsic reward off), so
every field is a ``demostudio train rnd-ppo`` / ``ppo`` flag with its docstring as help.
Defaults follow RL-RND's table of hyperparameters (which follows Burda et al. 2018), except the
number of environments (the paper's 128 is cluster-sized).

Every option of RL-RND's table and the DemoStudio flag it becomes
("core" = a field of the shared config, not repeated here)::

    --data_dir                          --run-dir (core; the parent of the run folder)
    --game                              --env (core)
    --experiment_name                   --run-dir (core; the run folder's name)
    --frame_resize                      --frame-resize
    --initial_normalization_num_trials  --obs-norm-init-steps (random-policy steps per env)
    --num_trials ("Rollout Length")     --rollout-length
    --portion_experience_train_rnd_predictor  --update-proportion
    --z_dim                             --hidden (core: width of the encoder output)
    --rnn_hidden_dim                    --lstm (core: LSTM state size)
    --rnn_hidden_layers                 --rnn-layers (0 = feed-forward CNN/MLP policy, 1 = LSTM;
                                        stacked LSTM layers are not built)
    --rnn_single_record_training        out of scope (only needed by the DNC)
    --final_hidden_dim                  --hidden (core: the policy and value heads have one
                                        hidden layer of this width)
    --final_hidden_layers               not built: one hidden layer per head (the core's heads)
    --epochs_per_iteration              --update-epochs
    --sequence_length                   --segment-length
    --minibatches                       --num-minibatches
    --stacked_frames                    --frame-stack
    --stacked_frames_rnd                --rnd-frame-stack
    --sticky_action_probability         --sticky-action-probability (none: 0.25 on ALE, 0 elsewhere)
    --intrinsic_coefficient             --int-coef
    --extrinsic_coefficient             --ext-coef
    --extrinsic_reward_clip             --ext-reward-clip
    --gamma_intrinsic                   --gamma-int
    --gamma_extrinsic                   --gamma-ext
    --lambda_gae                        --gae-lambda
    --epsilon_ppo                       --clip-range
    --rnd_obs_norm_clip                 --obs-norm-clip
    --beta_entropy                      --ent-coef
    --epsilon_greedy                    --epsilon-greedy
    --model_policy_lr                   --lr-policy
    --model_rnd_predictor_lr            --lr-predictor
    --model_value_lr                    --lr-value
    --model                             --resume (core; the final checkpoint is a snapshot
                                        like the others, so resuming a finished run loads it)
    --keep_past_x_snapshots             --keep-checkpoints (core; rnd-ppo's default 10)
    --no_resume                         --no-resume (core's --resume, on by default here: a run
                                        folder with checkpoints is continued, an empty one
                                        starts fresh; --no-resume refuses a folder that has
                                        checkpoints rather than overwrite them)
    --disable_progress_bar              --no-progress (core)
    --gpu                               --device (core)
    --gradient_clip                     --max-grad-norm (core field, default overridden
                                        here; 0 = no clipping)
    --rng_seed                          --seed (core)
    --num_threads                       --num-envs (envs stepped together, per actor process
                                        with --actor-procs: the core's Ray pool) and
                                        --torch-threads
    --target_cumulative_rewards_extrinsic  --target-rollout-return
    --dnc                               out of scope: no Differentiable Neural Computer
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from agents.core.config import (
    ActorProcsConfig,
    DemoConfig,
    InteractConfig,
    NetworkWidths,
    RunConfig,
)
from agents.rnd_ppo.groups import (
    AtariSettings,
    DemoPretrainSettings,
    PPOSettings,
    RNDSettings,
    is_ale,
)


@dataclass
class RNDPPOConfig(
    DemoPretrainSettings,
    AtariSettings,
    RNDSettings,
    PPOSettings,
    DemoConfig,
    NetworkWidths,
    ActorProcsConfig,
    InteractConfig,
    RunConfig,
):
    """Recurrent PPO with Random Network Distillation (Burda et al. 2018): an extrinsic and an
    intrinsic value head, observation normalisation, automatic resume."""

    demos_required: ClassVar[bool] = False

    # RND-PPO's defaults for core fields
    total_env_steps: int = 1_000_000
    resume: bool = True
    checkpoint_every: int = 50_000
    keep_checkpoints: int = 10
    eval_every: int = 50_000
    hidden: int = 256
    lstm: int = 256

    def advice(self) -> list[str]:
        """A budget that is not a whole number of rollouts runs the next whole one."""
        rollout = self.rollout_length * self.total_envs
        runs = rollout_budget(self.total_env_steps, rollout)
        if runs == self.total_env_steps:
            return []
        return [
            f"--total-env-steps {self.total_env_steps:,}: a rollout is {rollout:,} env steps "
            f"(--num-envs x --rollout-length of every actor process) and is never cut short, "
            f"so the run takes {runs:,} env steps (a multiple of {rollout:,} runs as asked)"
        ]

    # --- what the core's actors, sequences and learner read ------------------------------
    @property
    def num_actors(self) -> int:
        """Envs per actor pool part (this process, or each --actor-procs process)."""
        return self.num_envs

    @property
    def total_envs(self) -> int:
        """Envs of the whole pool: --num-envs in each of max(1, --actor-procs) processes."""
        return self.num_envs * max(1, self.actor_procs)

    @property
    def sequence_length(self) -> int:
        """A segment and the observation after its last step (the bootstrap value's)."""
        return self.segment_length + 1

    @property
    def period(self) -> int:
        return self.segment_length

    @property
    def end_behavior(self) -> Literal["zero_pad"]:
        return "zero_pad"

    @property
    def recurrent(self) -> bool:
        return self.rnn_layers > 0

    @property
    def learning_rate(self) -> float:
        """The optimiser's default rate (every group has its own: see ``param_groups``)."""
        return self.lr_policy

    learning_rate_field: ClassVar[str] = "lr_policy"
    """The flag that sets ``learning_rate`` (see ConfigGroup's)."""

    @property
    def adam_eps(self) -> float:
        return 1e-5

    @property
    def adam_beta1(self) -> float:
        return 0.9

    @property
    def minibatch_size(self) -> int:
        """Segments per minibatch: a rollout's segments split --num-minibatches ways."""
        return max(1, self.total_envs * (self.rollout_length // self.segment_length)
                   // self.num_minibatches)  # fmt: skip


@dataclass
class PPOConfig(RNDPPOConfig):
    """Recurrent PPO: RND-PPO with the intrinsic reward off (one extrinsic value head)."""

    intrinsic: bool = False


def rollout_budget(total_env_steps: int, rollout: int) -> int:
    """The env steps an on-policy run of ``total_env_steps`` takes: whole rollouts of
    ``rollout`` steps, the last one whole (its advantages need every step of it)."""
    return -(-total_env_steps // rollout) * rollout


__all__ = [
    "AtariSettings",
    "DemoPretrainSettings",
    "PPOConfig",
    "PPOSettings",
    "RNDPPOConfig",
    "RNDSettings",
    "is_ale",
    "rollout_budget",
]

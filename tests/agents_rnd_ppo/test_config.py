"""The RND-PPO config: one-line help per field, checks naming the flag, the source table
mapped, and the flat config the agent uses (groups + core groups)."""

from __future__ import annotations

import dataclasses

import pytest

from agents.core.config import NetworkWidths
from agents.rnd_ppo import config as config_module
from agents.rnd_ppo.config import (
    AtariSettings,
    DemoPretrainSettings,
    PPOConfig,
    PPOSettings,
    RNDPPOConfig,
    RNDSettings,
)
from demostudio.cli.dataclass_args import config_parser, dataclass_from_args, field_docs

GROUPS = (PPOSettings, RNDSettings, AtariSettings, DemoPretrainSettings, RNDPPOConfig)
Combined = RNDPPOConfig


@pytest.mark.parametrize("group", GROUPS)
def test_every_field_has_a_docstring(group):
    docs = field_docs(group)
    assert [f.name for f in dataclasses.fields(group) if not docs.get(f.name)] == []


def test_defaults_follow_the_source_table():
    ppo, rnd, atari = PPOSettings(), RNDSettings(), AtariSettings()
    assert (ppo.gamma_ext, ppo.gamma_int, ppo.gae_lambda) == (0.999, 0.99, 0.95)
    assert (ppo.ext_coef, ppo.int_coef, ppo.clip_range, ppo.ent_coef) == (2.0, 1.0, 0.1, 0.001)
    assert (ppo.update_epochs, ppo.num_minibatches, ppo.segment_length) == (4, 4, 64)
    assert (ppo.lr_policy, ppo.lr_value, ppo.lr_predictor) == (1e-4, 1e-4, 1e-4)
    assert (rnd.update_proportion, rnd.obs_norm_clip) == (0.25, 5.0)
    assert (atari.frame_resize, atari.frame_stack, atari.rnd_frame_stack) == (84, 4, 1)


def test_every_source_option_is_mapped():
    source_options = [
        "data_dir", "game", "experiment_name", "frame_resize",
        "initial_normalization_num_trials", "num_trials",
        "portion_experience_train_rnd_predictor", "z_dim", "rnn_hidden_dim",
        "rnn_hidden_layers", "rnn_single_record_training", "final_hidden_dim",
        "final_hidden_layers", "epochs_per_iteration", "sequence_length", "minibatches",
        "stacked_frames", "stacked_frames_rnd", "sticky_action_probability",
        "intrinsic_coefficient", "extrinsic_coefficient", "extrinsic_reward_clip",
        "gamma_intrinsic", "gamma_extrinsic", "lambda_gae", "epsilon_ppo",
        "rnd_obs_norm_clip", "beta_entropy", "epsilon_greedy", "model_policy_lr",
        "model_rnd_predictor_lr", "model_value_lr", "model", "keep_past_x_snapshots",
        "no_resume", "disable_progress_bar", "gpu", "gradient_clip", "rng_seed",
        "num_threads", "target_cumulative_rewards_extrinsic", "dnc",
    ]  # fmt: skip
    lines = config_module.__doc__.splitlines()
    mapped = {line.split()[0][2:] for line in lines if line.strip().startswith("--")}
    assert sorted(set(source_options) - mapped) == []
    # and every flag named on the DemoStudio side exists (here or in the core)
    flags = {f.name.replace("_", "-") for f in dataclasses.fields(Combined)}
    named = set()
    for line in lines:
        parts = line.split()
        if parts and parts[0].startswith("--") and len(parts) > 1 and parts[1].startswith("--"):
            named.add(parts[1][2:].removeprefix("no-"))
    assert sorted(named - flags) == []


def test_combined_with_core_flags_and_overrides():
    cfg = Combined()
    assert cfg.max_grad_norm == 0.0  # the source's --gradient_clip 0, not the core's 10
    parser = config_parser(Combined, prog="demostudio train rnd-ppo")
    ns = parser.parse_args(
        ["--rnn-layers", "0", "--sticky-action-probability", "0.1", "--no-intrinsic"]
    )
    cfg = dataclass_from_args(Combined, ns)
    assert (cfg.rnn_layers, cfg.sticky_action_probability, cfg.intrinsic) == (0, 0.1, False)
    help_text = parser.format_help()
    assert "--lr-predictor" in help_text and "--target-rollout-return" in help_text
    assert "--no-resume" in help_text and "--recurrent" not in help_text
    assert cfg.resume and cfg.keep_checkpoints == 10 and not PPOConfig().intrinsic
    cfg = dataclass_from_args(Combined, parser.parse_args(["--no-resume", "--rnn-layers", "1"]))
    assert not cfg.resume and cfg.recurrent and cfg.sequence_length == cfg.segment_length + 1


def test_minibatch_size_splits_a_rollout():
    cfg = RNDPPOConfig(num_envs=8, rollout_length=128, segment_length=32, num_minibatches=4)
    assert cfg.minibatch_size == 8 * 4 // 4
    with pytest.raises(ValueError, match="--rnn-layers: expected 0"):
        RNDPPOConfig(env="CartPole-v1", rnn_layers=2).validate()


@pytest.mark.parametrize(
    ("group", "changes", "message"),
    [
        (PPOSettings, {"segment_length": 48}, "--segment-length: expected a divisor of"),
        (PPOSettings, {"num_envs": 1, "num_minibatches": 4}, "--num-minibatches: expected <="),
        (PPOSettings, {"gamma_int": 0.0}, r"--gamma-int: expected in \(0, 1\]"),
        (PPOSettings, {"lr_value": 0.0}, "--lr-value: expected > 0"),
        (PPOSettings, {"epsilon_greedy": 1.5}, r"--epsilon-greedy: expected in \[0, 1\]"),
        (PPOSettings, {"ext_reward_scale": 0.0}, "--ext-reward-scale: expected > 0"),
        (NetworkWidths, {"policy_obs_norm_steps": -1}, "--policy-obs-norm-steps: expected >= 0"),
        (RNDSettings, {"update_proportion": 0.0}, "--update-proportion"),
        (AtariSettings, {"rnd_frame_stack": 5}, r"--rnd-frame-stack: expected in \[1, --frame"),
        (AtariSettings, {"sticky_action_probability": 1.0}, "--sticky-action-probability"),
    ],
)
def test_checks_name_the_flag(group, changes, message):
    group().validate()  # the defaults pass
    with pytest.raises(ValueError, match=message):
        group(**changes).validate()

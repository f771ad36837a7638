"""The Reactor's config: defaults validate, bad values name their flag, the core's groups are
checked too, demos are optional, and every option of REACTOR-torch has a flag."""

from __future__ import annotations

import dataclasses

import pytest

from agents.reactor.config import ReactorConfig, ReactorLossConfig
from demostudio.cli.dataclass_args import field_docs


def test_defaults_validate():
    ReactorLossConfig().validate()
    ReactorConfig().validate()  # no --demos needed


@pytest.mark.parametrize(
    ("field", "value", "flag"),
    [
        ("retrace_lambda", 1.5, "--retrace-lambda"),
        ("beta_clip", 0.5, "--beta-clip"),
        ("num_atoms", 1, "--num-atoms"),
        ("average_tau", 1.0, "--average-tau"),
        ("trust_region_delta", 0.0, "--trust-region-delta"),
        ("discount", 0.0, "--discount"),
        ("batch_size", 0, "--batch-size"),
        ("demo_ratio", 2.0, "--demo-ratio"),
        ("learning_rate_final", 0.0, "--learning-rate-final"),
        ("learning_rate_steps", -1, "--learning-rate-steps"),
    ],
)
def test_bad_values_name_the_flag(field, value, flag):
    with pytest.raises(ValueError, match=rf"^{flag}: expected"):
        ReactorConfig(**{field: value}).validate()


def test_a_given_value_support_is_checked():
    with pytest.raises(ValueError, match=r"^--v-max: expected > --v-min \(5.0\), got 1.0"):
        ReactorConfig(v_min=5.0, v_max=1.0).validate()
    ReactorConfig(v_max=-200.0).validate()  # v_min is settled from the env (test_support.py)


SEED_OPTIONS = {  # REACTOR-torch's main.py options -> ReactorConfig fields
    "num_workers": "num_actors",
    "t_max": "total_env_steps",
    "worker_steps": "trace",
    "batch_size": "batch_size",
    "replay_ratio": "env_steps_per_update",
    "buffer_len": "replay_capacity",
    "start_train_at": "min_replay",
    "discount": "discount",
    "c": "trace_clip",
    "trust_region": "trust_region",
    "trust_region_threshold": "trust_region_delta",
    "tau": "average_tau",
    "lr": "learning_rate",
    "reward_clip": "reward_clip",
    "entropy_weight": "entropy_weight",
    "max_grad_norm": "max_grad_norm",
    "env_name": "env",
    "exp_name": "run_dir",
}


def test_every_source_option_has_a_documented_flag():
    fields = {f.name for f in dataclasses.fields(ReactorConfig)}
    docs = field_docs(ReactorConfig)
    for option, name in SEED_OPTIONS.items():
        assert name in fields, option
        assert docs.get(name), f"--{name} has no help text"
    module_doc = __import__("agents.reactor.config", fromlist=["x"]).__doc__
    for option, name in SEED_OPTIONS.items():
        seed_flag = "--" + option.replace("_", "-")
        assert seed_flag in module_doc and "--" + name.replace("_", "-") in module_doc

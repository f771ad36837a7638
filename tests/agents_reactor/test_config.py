"""The Reactor's loss config: defaults validate, bad values name their flag, and it chains
to the validate of the config it is combined with."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from agents.reactor.config import ReactorLossConfig


@dataclass
class Shared:
    batch_size: int = 32

    def validate(self) -> None:
        if self.batch_size < 1:
            raise ValueError(f"--batch-size: expected >= 1, got {self.batch_size}")


@dataclass
class Combined(ReactorLossConfig, Shared):
    pass


def test_defaults_validate():
    ReactorLossConfig().validate()
    Combined().validate()


@pytest.mark.parametrize(
    ("field", "value", "flag"),
    [
        ("retrace_lambda", 1.5, "--retrace-lambda"),
        ("beta_clip", 0.5, "--beta-clip"),
        ("v_max", -200.0, "--v-max"),
        ("num_atoms", 1, "--num-atoms"),
        ("average_tau", -0.1, "--average-tau"),
        ("trust_region_delta", 0.0, "--trust-region-delta"),
    ],
)
def test_bad_values_name_the_flag(field, value, flag):
    with pytest.raises(ValueError, match=rf"^{flag}: expected"):
        ReactorLossConfig(**{field: value}).validate()


def test_chains_to_the_shared_validate():
    with pytest.raises(ValueError, match=r"^--batch-size"):
        Combined(batch_size=0).validate()

"""A stored env spec is compared with the installed registry's, never built from."""

from __future__ import annotations

import json
import sys

import gymnasium as gym
import h5py

from demostudio.episode import RecordEpisodes, make_env, validate
from demostudio.episode.envs import spec_differences

CARTPOLE = "gymnasium.envs.classic_control.cartpole:CartPoleEnv"


class _AfterMake(gym.Wrapper):
    """A wrapper put around the made env, as an agent's frame stacks or fixed layout are."""


def test_a_recording_of_a_wrapped_env_stores_the_registered_spec_and_validates(tmp_path):
    env = _AfterMake(make_env("CartPole-v1"))
    assert env.spec.additional_wrappers  # gymnasium lists the wrapper in the spec
    rec = RecordEpisodes(env, tmp_path, controller="policy:test", record_frames=False)
    rec.reset(seed=0)
    rec.step(0)
    rec.close()
    (path,) = rec.saved
    with h5py.File(path) as f:
        spec = json.loads(f.attrs["env_spec"])
    assert spec["entry_point"] == CARTPOLE and spec["additional_wrappers"] == []
    assert validate(path) == []


def test_fields_left_out_or_null_name_no_code():
    assert spec_differences("CartPole-v1", {"id": "CartPole-v1"}) == []
    assert spec_differences("CartPole-v1", {"entry_point": None, "vector_entry_point": None}) == []
    assert spec_differences("CartPole-v1", None) == []


def test_each_field_naming_other_code_is_named_with_what_was_expected():
    spec = json.loads(gym.spec("CartPole-v1").to_json())
    spec.update(
        id="MountainCar-v0",
        entry_point="os:system",
        vector_entry_point="os:popen",
        additional_wrappers=[{"name": "X", "entry_point": "os:execv", "kwargs": {}}],
    )
    found = dict(spec_differences("CartPole-v1", spec))
    assert set(found) == {"id", "entry_point", "vector_entry_point", "additional_wrappers"}
    assert f'expected the registered "{CARTPOLE}", got "os:system"' in found["entry_point"]
    assert 'got ["os:execv"]' in found["additional_wrappers"]


def test_a_module_id_is_refused_without_importing_it():
    """gymnasium.spec("module:Env") imports the module: the id is checked first."""
    found = spec_differences("ds_never_imported:Env-v0", {"id": "ds_never_imported:Env-v0"})
    assert [field for field, _ in found] == ["id"]
    assert "ds_never_imported" not in sys.modules


def test_an_id_the_registry_lacks_has_nothing_to_compare():
    assert spec_differences("NoSuchEnv-v0", {"entry_point": "os:system"}) == []

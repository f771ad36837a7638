"""Key maps: every bundled game with the real pygame key constants, translation of the envs' own
maps, combos, and clear errors for bad files."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pygame
import pytest

from demostudio.cli import main
from demostudio.episode import make_env
from demostudio.play.keymap import (
    KeyMapError,
    bundled_keymap_files,
    env_keymap,
    key_name,
    load_keymap,
    resolve_keymap,
)
from tests.hostile_files import make_hostile


def names(*keys: int) -> list[str]:
    """Key names as the window sees them: pygame.key.name of the real constants."""
    return [pygame.key.name(k) for k in keys]


def keymap_for(env_id: str, **kwargs):
    env = make_env(env_id, kwargs)
    try:
        return resolve_keymap(env, env_id), env.action_space
    finally:
        env.close()


def test_mountaincar_pygame1_arrows_are_translated():
    km, _ = keymap_for("MountainCar-v0")
    assert km.source == "MountainCar-v0 get_keys_to_action()"
    assert km.action_for(names(pygame.K_LEFT)) == 0
    assert km.action_for(names(pygame.K_RIGHT)) == 2
    assert km.action_for([]) == 1
    assert km.action_for(names(pygame.K_LEFT, pygame.K_RIGHT)) == 1
    assert km.keys == {"left", "right"}
    assert key_name(276) == "left" and key_name(275) == "right"


def test_breakout_uses_ale_map_with_arrow_aliases():
    km, _ = keymap_for("ALE/Breakout-v5")
    assert "get_keys_to_action" in km.source
    meanings = ["NOOP", "FIRE", "RIGHT", "LEFT"]
    assert km.action_for([]) == meanings.index("NOOP")
    assert km.action_for(names(pygame.K_SPACE)) == meanings.index("FIRE")
    for key in (pygame.K_LEFT, pygame.K_a):
        assert km.action_for(names(key)) == meanings.index("LEFT")
    for key in (pygame.K_RIGHT, pygame.K_d):
        assert km.action_for(names(key)) == meanings.index("RIGHT")
    # Keys the game does not use fall back to the no-op.
    assert km.action_for(names(pygame.K_UP)) == 0


def test_montezuma_combinations_give_combined_actions():
    env = make_env("ALE/MontezumaRevenge-v5")
    meanings = env.unwrapped.get_action_meanings()
    km = resolve_keymap(env, "ALE/MontezumaRevenge-v5")
    env.close()

    def act(*keys):
        return meanings[km.action_for(names(*keys))]

    assert act() == "NOOP"
    assert act(pygame.K_UP, pygame.K_LEFT) == "UPLEFT"
    assert act(pygame.K_w, pygame.K_a) == "UPLEFT"
    assert act(pygame.K_DOWN, pygame.K_RIGHT, pygame.K_SPACE) == "DOWNRIGHTFIRE"
    assert act(pygame.K_RIGHT, pygame.K_SPACE) == "RIGHTFIRE"
    assert act(pygame.K_UP) == "UP"
    # LEFT then RIGHT held: no LEFT+RIGHT action, the latest press wins.
    assert act(pygame.K_LEFT, pygame.K_RIGHT) == "RIGHT"
    assert act(pygame.K_RIGHT, pygame.K_LEFT) == "LEFT"


@pytest.mark.parametrize("full", [False, True])
def test_pong_plays_with_up_and_down(full):
    """Pong's bundled map replaces ALE's (whose RIGHT/LEFT move the paddle up/down); its
    actions are given by name, so the full 18-action space works too."""
    env = make_env("ALE/Pong-v5", {"full_action_space": full})
    meanings = env.unwrapped.get_action_meanings()
    km = resolve_keymap(env, "ALE/Pong-v5")
    env.close()
    assert km.source == "bundled:pong.json"

    def act(*keys):
        return meanings[km.action_for(names(*keys))]

    assert act() == "NOOP"
    assert act(pygame.K_UP) == act(pygame.K_w) == "RIGHT"
    assert act(pygame.K_DOWN) == "LEFT"
    assert act(pygame.K_DOWN, pygame.K_SPACE) == "LEFTFIRE"


def test_every_ale_action_reachable():
    env = make_env("ALE/SpaceInvaders-v5")
    km = resolve_keymap(env, "ALE/SpaceInvaders-v5")
    reachable = {km.noop} | {b.action for b in km.bindings}
    assert reachable == set(range(env.action_space.n))
    env.close()


def test_actions_by_name(tmp_path):
    doc = {"noop": "noop", "bindings": [{"keys": ["up"], "action": "UPFIRE"}]}
    env = make_env("ALE/MontezumaRevenge-v5")
    meanings = env.unwrapped.get_action_meanings()
    km = resolve_keymap(env, "x", write(tmp_path, doc))
    assert meanings[km.action_for(["up"])] == "UPFIRE" and km.noop == 0
    doc["bindings"][0]["action"] = "JUMP"
    with pytest.raises(KeyMapError, match=r"bindings\[0\]\.action: expected an action number"):
        resolve_keymap(env, "x", write(tmp_path, doc))
    env.close()


@pytest.mark.parametrize(
    ("env_id", "kwargs", "cases"),
    [
        ("CartPole-v1", {}, [((), 0), ((pygame.K_LEFT,), 0), ((pygame.K_RIGHT,), 1)]),
        (
            "Acrobot-v1",
            {},
            [((), 1), ((pygame.K_LEFT,), 0), ((pygame.K_RIGHT,), 2), ((pygame.K_d,), 2)],
        ),
        (
            "LunarLander-v3",
            {},
            [((), 0), ((pygame.K_UP,), 2), ((pygame.K_LEFT,), 1), ((pygame.K_RIGHT,), 3)],
        ),
        (
            "LunarLander-v3",
            {"continuous": True},
            [
                ((), [0.0, 0.0]),
                ((pygame.K_UP,), [1.0, 0.0]),
                ((pygame.K_UP, pygame.K_LEFT), [1.0, -1.0]),
                ((pygame.K_RIGHT, pygame.K_w), [1.0, 1.0]),
                ((pygame.K_DOWN,), [0.25, 0.0]),
            ],
        ),
        (
            "LunarLanderContinuous-v3",
            {},
            [((pygame.K_UP, pygame.K_RIGHT), [1.0, 1.0])],
        ),
        ("MountainCarContinuous-v0", {}, [((), [0.0]), ((pygame.K_LEFT,), [-1.0])]),
        ("Pendulum-v1", {}, [((pygame.K_LEFT,), [2.0]), ((pygame.K_RIGHT,), [-2.0])]),
    ],
)
def test_bundled_keymaps_with_real_key_constants(env_id, kwargs, cases):
    km, space = keymap_for(env_id, **kwargs)
    assert km.source.startswith("bundled:")
    for keys, expected in cases:
        action = km.action_for(names(*keys))
        assert action == expected, (keys, action)
        assert space.contains(np.asarray(action, dtype=space.dtype).reshape(space.shape))


@pytest.mark.parametrize(
    "env_id",
    ["MiniGrid-DoorKey-8x8-v0", "MiniGrid-KeyCorridorS3R1-v0", "MiniGrid-MemoryS13Random-v0"],
)
def test_minigrid_every_action_has_a_key(env_id):
    env = make_env(env_id)
    actions = env.unwrapped.actions
    km = resolve_keymap(env, env_id)
    env.close()
    expected = {
        pygame.K_LEFT: actions.left,
        pygame.K_RIGHT: actions.right,
        pygame.K_UP: actions.forward,
        pygame.K_PAGEUP: actions.pickup,
        pygame.K_TAB: actions.pickup,
        pygame.K_PAGEDOWN: actions.drop,
        pygame.K_SPACE: actions.toggle,
        pygame.K_RETURN: actions.done,
    }
    for key, action in expected.items():
        assert km.action_for(names(key)) == int(action), pygame.key.name(key)
    assert {b.action for b in km.bindings} == {int(a) for a in actions}


def test_every_bundled_file_is_valid_for_a_matching_env():
    """Each bundled file parses against an env its patterns name."""
    examples = {
        "acrobot.json": "Acrobot-v1",
        "cartpole.json": "CartPole-v1",
        "lunarlander.json": "LunarLander-v3",
        "lunarlander_continuous.json": "LunarLanderContinuous-v3",
        "minigrid.json": "MiniGrid-DoorKey-5x5-v0",
        "mountaincar_continuous.json": "MountainCarContinuous-v0",
        "pendulum.json": "Pendulum-v1",
        "pong.json": "ALE/Pong-v5",
    }
    files = {p.name: p for p in bundled_keymap_files()}
    assert set(files) == set(examples)
    for name, env_id in examples.items():
        env = make_env(env_id)
        meanings = getattr(env.unwrapped, "get_action_meanings", lambda: [])()
        km = load_keymap(files[name], env.action_space, meanings)
        env.close()
        assert km.bindings and all(b.label for b in km.bindings)


def test_to_json_lists_every_key_combination():
    km, _ = keymap_for("ALE/MontezumaRevenge-v5")
    doc = km.to_json()
    json.dumps(doc)
    assert doc[""] == km.noop
    assert doc["a+w"] == doc["left+up"] == doc["a+up"] == km.action_for(["up", "left"])


# ---- bad key maps ------------------------------------------------------------------------------


def write(tmp_path, doc) -> str:
    path = tmp_path / "my_keys.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return str(path)


GOOD = {"noop": 1, "bindings": [{"keys": ["left"], "action": 0}, {"keys": ["right"], "action": 2}]}


def test_user_keymap_file_is_used(tmp_path):
    env = make_env("MountainCar-v0")
    km = resolve_keymap(env, "MountainCar-v0", write(tmp_path, GOOD))
    env.close()
    assert km.source.endswith("my_keys.json")
    assert km.action_for(["right"]) == 2


@pytest.mark.parametrize(
    ("doc", "entry", "expected"),
    [
        (
            {**GOOD, "bindings": [{"keys": ["lefft"], "action": 0}]},
            "bindings[0].keys",
            "expected a pygame key name",
        ),
        (
            {**GOOD, "bindings": [GOOD["bindings"][0], {"keys": ["right"], "action": 7}]},
            "bindings[1].action",
            "expected an action in Discrete(3) (0..2), got 7",
        ),
        ({**GOOD, "noop": 3}, "noop", "got 3"),
        ({"bindings": GOOD["bindings"]}, "noop", "expected the action taken when no key"),
        ({**GOOD, "bindings": [{"keys": ["up"], "action": 0.5}]}, "bindings[0].action", "integer"),
        ({**GOOD, "bindings": []}, "bindings", "non-empty list"),
        ({**GOOD, "bindings": [{"key": "up"}]}, "bindings[0]", '"keys"'),
        ({**GOOD, "aliases": {"a": "up"}}, "aliases['a']", "key used in bindings"),
        ({**GOOD, "aliases": {"qq": "left"}}, "aliases['qq']", "pygame key name"),
        ("{not json", "file", "expected JSON"),
        ([1, 2], "top level", "expected a JSON object"),
    ],
)
def test_bad_keymap_errors_name_file_and_entry(tmp_path, doc, entry, expected):
    path = write(tmp_path, doc)
    with pytest.raises(KeyMapError) as err:
        load_keymap(path, gym.spaces.Discrete(3))
    assert err.value.source == path
    assert err.value.entry == entry
    assert expected in str(err.value)
    assert str(err.value).startswith(f"{path}: {entry}: ")


def _hostile_keymap(tmp_path, kind):
    path = tmp_path / "keys.json"
    if not make_hostile(path, kind) and kind == "key_code":  # a 2 GB one was read whole
        doc = {**GOOD, "bindings": [{"keys": [10**20], "action": 0}]}
        path.write_text(json.dumps(doc))
    return path


@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    "kind, entry, expected",
    [
        ("fifo", "file", "got a special file (FIFO, device)"),
        ("devzero", "file", "got a special file (FIFO, device)"),
        ("folder", "file", "got a folder"),
        ("loop", "file", "got a link loop"),
        ("huge", "file", "of at most 1048576 bytes, got 2147483648 bytes"),
        ("nested", "file", "expected JSON nested at most 64 deep"),
        ("key_code", "bindings[0].keys", "expected a pygame key code, got 1000"),
    ],
)
def test_hostile_keymap_files_are_one_line_errors(tmp_path, kind, entry, expected):
    """A FIFO hung `--keymap`, /dev/zero and a sparse 2 GB file were read whole (16 GB RSS),
    deep nesting and a huge key code raised RecursionError / OverflowError tracebacks."""
    path = _hostile_keymap(tmp_path, kind)
    with pytest.raises(KeyMapError) as err:
        load_keymap(path, gym.spaces.Discrete(3))
    assert err.value.entry == entry
    assert expected in str(err.value)
    assert str(err.value).startswith(f"{path}: {entry}: ")
    assert "\n" not in str(err.value)


def test_box_action_outside_space_is_an_error(tmp_path):
    doc = {"noop": [0.0, 0.0], "bindings": [{"keys": ["up"], "action": [2.0, 0.0]}]}
    space = gym.spaces.Box(-1, 1, (2,), np.float32)
    with pytest.raises(KeyMapError, match=r"bindings\[0\]\.action: expected an action inside"):
        load_keymap(write(tmp_path, doc), space)
    doc["bindings"][0]["action"] = [1.0]
    with pytest.raises(KeyMapError, match=r"expected an action of shape \(2,\)"):
        load_keymap(write(tmp_path, doc), space)


def test_missing_keymap_file(tmp_path):
    with pytest.raises(KeyMapError, match="does not exist"):
        load_keymap(tmp_path / "nope.json", gym.spaces.Discrete(2))


def test_env_without_any_keymap_is_a_clear_error():
    env = make_env("Pendulum-v1")  # no get_keys_to_action; pretend no bundled file matches
    with pytest.raises(KeyMapError, match="--keymap FILE") as err:
        resolve_keymap(env, "Unknown-v0")
    env.close()
    assert err.value.entry == "key map"


def test_env_keymap_none_for_env_without_one():
    env = make_env("CartPole-v1")
    assert env_keymap(env) is None
    env.close()


@pytest.mark.parametrize(
    "env_id, kwargs",
    [
        ("ALE/MontezumaRevenge-v5", {}),
        ("ALE/Pong-v5", {"full_action_space": True}),
        ("MountainCar-v0", {}),
        ("CartPole-v1", {}),
        ("MiniGrid-DoorKey-5x5-v0", {}),
        ("LunarLander-v3", {"continuous": True}),
    ],
)
def test_no_key_map_takes_the_window_controls(env_id, kwargs):
    """Frame advance (.), speed ([ ]) and take-over (T) are free in every bundled key map and
    in the envs' own maps, so they always work as controls."""
    from demostudio.play.state import FASTER_KEYS, SLOWER_KEYS, STEP_KEYS, TAKEOVER_KEYS

    controls = STEP_KEYS | SLOWER_KEYS | FASTER_KEYS | TAKEOVER_KEYS
    assert controls == set(names(pygame.K_PERIOD, pygame.K_LEFTBRACKET, pygame.K_RIGHTBRACKET,
                                 pygame.K_t))  # fmt: skip
    km, _ = keymap_for(env_id, **kwargs)
    assert not km.keys & controls
    for path in bundled_keymap_files():
        doc = json.loads(path.read_text())
        keys = {key_name(k) for b in doc["bindings"] for k in b["keys"]}
        keys |= {key_name(k) for k in doc.get("aliases", {})}
        assert not keys & controls, path.name


def test_labels_from_a_key_map_file_reach_the_terminal_escaped(tmp_path, capsys):
    doc = {**GOOD, "bindings": [{"keys": ["left"], "action": 0, "label": "\x1b[2Jgo\nleft"},
                                {"keys": ["right"], "action": 2}]}  # fmt: skip
    path = write(tmp_path, doc)
    assert main(["keymap", "MountainCar-v0", "--keymap", str(path)]) == 0
    out = capsys.readouterr().out
    assert "\\x1b[2Jgo\\nleft" in out and "\x1b" not in out

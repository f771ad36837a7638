"""benchmarks/bench_rnd_ppo.py's DoorKey diagnostic: steps carrying the key and steps with
an open door in view, read from MiniGrid's symbolic views; and the side-by-side table."""

from __future__ import annotations

import argparse
import json

import gymnasium as gym
import numpy as np
import pytest
from minigrid.core.world_object import Door, Key


@pytest.fixture
def bench(benchmark_script):
    return benchmark_script("bench_rnd_ppo")


def test_counts_by_hand(bench):
    image = np.zeros((2, 3, 7, 7, 3), dtype=np.uint8)  # [B, L, W, H, 3]
    carried = Key("yellow").encode()
    image[0, 1, 3, 6] = carried  # the agent's cell: what it carries
    image[1, 2, 3, 6] = carried  # masked out below
    image[0, 0, 1, 2] = carried  # a key lying in view, not carried
    image[0, 2, 2, 2] = Door("yellow", is_open=True).encode()
    image[1, 0, 2, 2] = Door("yellow", is_locked=True).encode()  # closed: not counted
    mask = np.array([[True, True, True], [True, True, False]])
    assert bench.doorkey_progress(image, mask) == (1, 1)


def test_the_carried_key_in_a_real_view(bench):
    env = gym.make("MiniGrid-DoorKey-5x5-v0")
    env.reset(seed=0)
    progress = bench.doorkey_progress
    image = env.unwrapped.gen_obs()["image"][None]
    assert progress(image, np.array([True]))[0] == 0
    env.unwrapped.carrying = Key("yellow")
    image = env.unwrapped.gen_obs()["image"][None]
    assert progress(image, np.array([True]))[0] == 1
    env.close()


def test_table_puts_work_folders_side_by_side(tmp_path, bench):
    module = bench
    for work, sets, finals in (("a", '{"int_coef": 1.0}', (0.0, 1.0, 0.0)),
                               ("b", '{"int_coef": 0.25}', (0.6, 1.0, 1.0))):  # fmt: skip
        folder = tmp_path / work
        folder.mkdir()
        lines = []
        for seed, final in zip((0, 100, 200), finals, strict=True):
            env, variant = "MiniGrid-DoorKey-8x8-v0", "rnd-ppo+demos"
            run_dir = module.run_dir_of(folder, env, variant, seed, sets)
            run_dir.mkdir()
            evals = [{"kind": "eval", "env_steps": 0, "eval_return": 0.0, "eval_success": 0.0},
                     {"kind": "train", "env_steps": 1024},
                     {"kind": "eval", "env_steps": 2048, "eval_return": 0.9 * final,
                      "eval_success": final}]  # fmt: skip
            (run_dir / "metrics.jsonl").write_text("".join(f"{json.dumps(e)}\n" for e in evals))
            lines.append({"env": env, "variant": variant, "seed": seed, "budget": 2048,
                          "set": sets, "first_success_train_step": 88 if final else None,
                          "first_success_eval_step": 2048 if final else None,
                          "final_success": final, "final_return": 0.9 * final})  # fmt: skip
        (folder / "results.jsonl").write_text("".join(f"{json.dumps(r)}\n" for r in lines[::-1]))
    args = argparse.Namespace(tables=[str(tmp_path / "a"), str(tmp_path / "b")])
    groups = module.table(args)["groups"]
    a, b = (groups[f"MiniGrid-DoorKey-8x8-v0 rnd-ppo+demos budget=2048 set={s}"]
            for s in ('{"int_coef": 1.0}', '{"int_coef": 0.25}'))  # fmt: skip
    assert a["seeds"] == b["seeds"] == [0, 100, 200]
    assert b["runs"][0]["evals"] == [(0, 0.0, 0.0), (2048, 0.6, 0.54)]  # sorted by seed
    assert (a["median_final_success"], b["median_final_success"]) == (0.0, 1.0)
    assert a["median_first_success_eval_step"] is None  # 2 of 3 never: past the budget
    assert b["median_first_success_eval_step"] == 2048
    assert b["median_final_return"] == 0.9
    assert [r["mean_success_second_half"] for r in b["runs"]] == [0.6, 1.0, 1.0]
    assert b["median_success_second_half"] == 1.0

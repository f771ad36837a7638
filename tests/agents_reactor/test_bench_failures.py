"""benchmarks/bench_reactor.py failures: why each checkpoint's greedy CartPole episodes
ended (cart off the track or pole fallen), on a short real run."""

from __future__ import annotations

import pytest

from agents.core.run import train
from agents.reactor import Reactor, ReactorConfig


def test_every_checkpoint_is_played_and_each_ending_is_named(tmp_path, benchmark_script):
    run = tmp_path / "run"
    cfg = ReactorConfig(env="CartPole-v1", num_actors=2, hidden=16, lstm=16, batch_size=4,
                        min_replay=4, eval_every=0, total_env_steps=300, checkpoint_every=150,
                        progress=False, tensorboard=False, device="cpu", run_dir=run)  # fmt: skip
    train(Reactor(cfg))
    out = benchmark_script("bench_reactor").checkpoint_failures(run, episodes=3)
    names = [r["checkpoint"] for r in out["checkpoints"]]
    assert names[-1] == "final.pt" and len(names) >= 3  # step-150, step-300 (or so), final
    assert [r["env_steps"] for r in out["checkpoints"]] == sorted(
        r["env_steps"] for r in out["checkpoints"]
    )
    for row in out["checkpoints"]:
        failed = row["off_track"] + row["pole_fell"]
        assert failed == len(row["failed_lengths"]) <= 3
        assert all(n < 500 for n in row["failed_lengths"])
        distance = row["failed_cart_distance"]  # sorted: the off-track ones are the farthest
        assert len(distance) == failed
        assert all(d > 2.4 for d in distance[len(distance) - row["off_track"] :])
        assert all(d <= 2.4 for d in distance[: row["pole_fell"]])
        # the episodes that did not fail ran to CartPole's 500-step limit
        expected = (sum(row["failed_lengths"]) + 500 * (3 - failed)) / 3
        assert abs(row["mean_length"] - expected) < 1e-9
        assert abs(row["mean_pole_angle_deg"]) < 12.0  # CartPole ends an episode past 12 deg
        assert 0.0 <= row["mean_cart_distance"] <= max([*distance, 2.4])
        # one signed settling position per episode, inside what the cart can reach
        settles = row["cart_settles"]
        assert len(settles) == 3 and all(abs(x) <= 2.4 + 0.5 for x in settles)
        assert sum(row["settles_left_right"]) == sum(x != 0 for x in settles)
        assert row["settles_left_right"][1] == sum(x > 0 for x in settles)
        # the restoring map: one episode from rest per start, each played to its end
        starts = [r["start"] for r in row["from_rest"]]
        assert starts == [-1.6, -1.2, -0.8, -0.4, 0.0, 0.4, 0.8, 1.2, 1.6]
        for rest in row["from_rest"]:
            assert 1 <= rest["length"] <= 500 and abs(rest["settles"]) <= 2.4 + 0.5
            if rest["length"] < 10:  # too short to go far: it settles near where it started
                assert abs(rest["settles"] - rest["start"]) < 0.2
            if rest["length"] < 500:  # it ended: the critic's value k steps before the end
                truth = {k: (1 - 0.99**k) / 0.01 for k in (25, 50, 100) if k <= rest["length"]}
                got = rest["value_before_end"]
                assert set(got) == set(truth) and "value_at_start" not in rest
                for k, (critic, true) in got.items():
                    assert abs(true - truth[k]) < 0.1 and -9.94 - 1e-3 <= critic <= 109.28 + 1e-3
            else:
                assert rest["value_at_start"][1] == 100.0 and "value_before_end" not in rest
    # an untrained policy loses CartPole quickly: every episode of the first checkpoint fails
    first = out["checkpoints"][0]
    assert first["off_track"] + first["pole_fell"] == 3 and first["mean_length"] < 500
    assert out["horizon"] == 1.0 and {r["step_limit"] for r in out["checkpoints"]} == {500}
    # past the step limit (a slow drift shows only there) and with random actions mixed in
    longer = benchmark_script("bench_reactor").checkpoint_failures(run, 2, horizon=2.5,
                                                                   epsilon=0.5)  # fmt: skip
    assert {r["step_limit"] for r in longer["checkpoints"]} == {1250}
    assert (longer["horizon"], longer["epsilon"]) == (2.5, 0.5)
    assert all(1 <= r["mean_length"] <= 1250 for r in longer["checkpoints"])


def test_bad_horizon_or_epsilon_gets_one_line(tmp_path, benchmark_script, capsys):
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "final.pt").write_bytes(b"not read")
    for bad in (["--horizon", "0.5"], ["--epsilon", "2"]):
        with pytest.raises(SystemExit) as exc:
            benchmark_script("bench_reactor").main(["failures", str(tmp_path), *bad])
        assert exc.value.code == 2
        line = capsys.readouterr().err.strip().splitlines()[-1]
        assert "expected a horizon >= 1 and an epsilon in [0, 1]" in line


@pytest.mark.parametrize(
    ("config", "got"), [('{"algo": "r2d2"}', "'r2d2'"), ("[1, 2", "None"), (None, "None")]
)
def test_a_run_that_is_not_a_reactor_run_gets_one_line(
    tmp_path, benchmark_script, capsys, config, got
):
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "final.pt").write_bytes(b"not read")
    if config is not None:
        (tmp_path / "config.json").write_text(config)
    with pytest.raises(SystemExit) as exc:
        benchmark_script("bench_reactor").main(["failures", str(tmp_path)])
    assert exc.value.code == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert line.endswith(f"config.json: algo: expected a Reactor run, got {got}")

"""Hostile numbers on `train`: size flags bounded per field (one line each), a memory
estimate before anything big is allocated (with fake memory figures), probabilities and
ranges checked up front, a diverging loss stopped in one line, a failed run leaving no
finished-looking final.pt, negative numbers in any float syntax, a flag of another algorithm
named in one line, and errors naming the flags the user gave."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path

import pytest

import agents.core.footprint as footprint
import agents.core.loop as loop_module
import agents.core.run as run_module
from agents.core.checkpoint import latest_checkpoint, load_checkpoint
from agents.core.footprint import GIB, Part, check_fits
from agents.core.logger import read_metrics
from agents.registry import algorithm_names, get_algorithm
from demostudio.cli import main
from tests.agents.test_crash_resume import FLAGS


def _error(argv: list[str], capsys) -> str:
    """The one stderr line of a refused command (exit 2)."""
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("demostudio: error: "), err
    return lines[0][len("demostudio: error: ") :]


def _train(algo: str, *flags: str, run) -> list[str]:
    demos = (
        ["--demos", "demos/CartPole-v1"]
        if getattr(get_algorithm(algo).config_cls, "demos_required", False)
        else []
    )
    return ["train", algo, "--env", "CartPole-v1", "--device", "cpu", "--no-progress",
            "--run-dir", str(run), *demos, *flags]  # fmt: skip


# --- 1. size flags: an upper bound per field, one line ---------------------------------------


@pytest.mark.parametrize(
    ("algo", "flag", "bound"),
    [
        ("r2d2", "--hidden", "4096"),
        ("r2d2", "--lstm", "4096"),
        ("r2d2", "--batch-size", "4096"),
        ("r2d2", "--trace", "1000"),
        ("r2d2", "--burn-in", "1000"),
        ("r2d2", "--replay-capacity", "10000000"),
        ("r2d2", "--num-actors", "1024"),
        ("r2d2", "--n-step", "1000"),
        ("r2d2", "--torch-threads", "1024"),
        ("dqfd", "--demo-capacity", "10000000"),
        ("reactor", "--num-atoms", "10001"),
        ("ppo", "--num-envs", "1024"),
        ("rnd-ppo", "--rnd-embed-dim", "8192"),
        ("rnd-ppo", "--rnd-hidden", "8192"),
        ("ppo", "--frame-stack", "16"),
        ("ppo", "--frame-resize", "512"),
        # counts that only cost time: a typo would run for years
        ("dqfd", "--pretrain-updates", "100000000"),
        ("bc", "--max-updates", "100000000"),
        ("rnd-ppo", "--bc-pretrain-updates", "100000000"),
        ("r2d2", "--total-env-steps", "100000000000"),
    ],
)
def test_size_flags_have_an_upper_bound(algo, flag, bound, tmp_path, capsys):
    run = tmp_path / "run"
    line = _error(_train(algo, flag, "1000000000000", run=run), capsys)
    assert line == f"{flag}: expected <= {bound}, got 1000000000000"
    assert not run.exists()


def _config_groups() -> set[type]:
    """ConfigGroup and every class derived from it (groups and algorithms' configs)."""
    from agents.core.config import ConfigGroup

    def groups(cls):
        yield cls
        for sub in cls.__subclasses__():
            yield from groups(sub)

    return set(groups(ConfigGroup))


def test_every_bound_names_a_field_of_its_group():
    """A bound declared for a field its group lacks would never be checked."""
    for group in _config_groups():
        names = {f.name for f in dataclasses.fields(group)}
        for name in group.__dict__.get("limits", {}):
            assert name in names, f"{group.__name__}.limits names {name}, not a field of it"


def test_every_group_names_only_its_own_fields_as_diverging():
    """The core knows no algorithm's fields: each group declares which of the fields it
    declares itself can make the learner diverge."""
    for group in _config_groups():
        own = set(inspect.get_annotations(group)) & {f.name for f in dataclasses.fields(group)}
        for name in group.__dict__.get("diverging", ()):
            assert name in own, f"{group.__name__}.diverging names {name}, not its own field"


# --- 1. the memory estimate --------------------------------------------------------------


def test_memory_estimate_refuses_a_replay_the_machine_cannot_hold(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(footprint, "available_memory", lambda: 2 * GIB)
    run = tmp_path / "run"
    line = _error(_train("r2d2", "--replay-capacity", "5000000", run=run), capsys)
    assert line.startswith("--replay-capacity 5000000: the agent replay would need ~")
    assert line.endswith("this machine has ~2.0 GiB available")
    assert "5,000,000 sequences of 31 steps" in line
    assert not run.exists()


def test_memory_estimate_counts_the_networks_on_the_meta_device(tmp_path, capsys, monkeypatch):
    """--hidden 4096 --lstm 4096 is within the bounds; on a 1 GiB machine the parameters (with
    gradients, Adam's moments, the target) do not fit, and nothing was allocated to find out."""
    monkeypatch.setattr(footprint, "available_memory", lambda: 1 * GIB)
    run = tmp_path / "run"
    line = _error(_train("r2d2", "--hidden", "4096", "--lstm", "4096", run=run), capsys)
    assert line.startswith("--hidden 4096, --lstm 4096: the networks would need ~")
    assert "parameters" in line and line.endswith("~1.0 GiB available")


def test_memory_estimate_names_the_batch(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(footprint, "available_memory", lambda: GIB // 2)
    line = _error(_train("r2d2", "--batch-size", "4096", "--trace", "1000", run=tmp_path / "b"),
                  capsys)  # fmt: skip
    assert line.startswith("--batch-size 4096: a learner batch would need ~")


def test_the_demo_replay_counts_the_demos_it_holds():
    """The demo replay holds the demos, not --demo-capacity sequences: two CartPole demos
    of a few dozen steps are a few sequences, whatever the capacity."""
    from agents.core.preprocess import Leaf
    from agents.dqfd.agent import DQfD
    from agents.dqfd.config import DQfDConfig

    cfg = DQfDConfig(env="CartPole-v1", demos=(Path("demos/CartPole-v1"),), demo_capacity=5_000_000)
    held = footprint.demo_sequences(cfg.demos, cfg.period)
    assert held is not None and 2 <= held < 500
    sizes = DQfD(cfg).memory_sizes(count_demos=True)
    parts = footprint.estimate(sizes, {"obs": Leaf("vector", (4,))}, 2, 1000)
    demo = next(p for p in parts if p.name == "the demo replay")
    assert demo.flags == f"--demos ({held} sequences)"


def test_check_fits_with_fake_figures():
    parts = [Part("the agent replay", "--replay-capacity 10", "x", 3 * GIB),
             Part("the networks", "--hidden 64", "y", GIB)]  # fmt: skip
    check_fits(parts, 5 * GIB)
    check_fits(parts, None)  # unknown: nothing refused
    with pytest.raises(ValueError) as err:
        check_fits(parts, 2 * GIB)
    assert str(err.value) == (
        "--replay-capacity 10: the agent replay would need ~3.0 GiB (x; the run ~4.0 GiB in "
        "all), this machine has ~2.0 GiB available"
    )


def test_available_memory_reads_proc_meminfo_without_psutil(monkeypatch, tmp_path):
    import builtins

    real_import, real_open = builtins.__import__, builtins.open
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       16000000 kB\nMemAvailable:    2097152 kB\n")

    def no_psutil(name, *args, **kwargs):
        if name == "psutil":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    def fake_open(path, *args, **kwargs):
        return real_open(meminfo if path == "/proc/meminfo" else path, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_psutil)
    monkeypatch.setattr(builtins, "open", fake_open)
    assert footprint.available_memory() == 2 * GIB


def test_default_runs_fit_on_a_small_machine():
    """Every algorithm's defaults on CartPole need well under 1 GiB by the estimate."""
    import gymnasium as gym

    from agents.core.agent import EnvInfo
    from agents.core.preprocess import make_preprocessor

    for algo in algorithm_names():
        entry = get_algorithm(algo)
        cfg = entry.config_cls(env="CartPole-v1")
        agent = entry.agent_cls(cfg)
        env = gym.make("CartPole-v1")
        info = EnvInfo("CartPole-v1", env, make_preprocessor(env.observation_space))
        agent.configure(info)
        params = footprint.meta_parameter_count(lambda a=agent, i=info: a.build_networks(i))
        sizes = agent.memory_sizes(count_demos=True)
        parts = footprint.estimate(sizes, info.preprocess.spec, info.num_actions, params)
        assert sum(p.bytes for p in parts) < GIB // 2, (algo, parts)
        env.close()


# --- 2. probabilities and ranges up front ------------------------------------------------


@pytest.mark.parametrize(
    ("algo", "flag", "value", "expected"),
    [
        ("r2d2", "--eval-epsilon", "1.5", "--eval-epsilon: expected in [0, 1], got 1.5"),
        ("ppo", "--eval-epsilon", "-1", "--eval-epsilon: expected in [0, 1], got -1.0"),
        ("reactor", "--epsilon-base", "1.5", "--epsilon-base: expected in [0, 1], got 1.5"),
        ("r2d2", "--epsilon-alpha", "-1", "--epsilon-alpha: expected >= 0, got -1.0"),
        ("r2d2", "--priority-alpha", "1.5", "--priority-alpha: expected in [0, 1], got 1.5"),
        ("r2d2", "--rescale-eps", "0", "--rescale-eps: expected > 0, got 0.0"),
        ("r2d2", "--min-replay", "-1", "--min-replay: expected >= 0, got -1"),
        ("r2d3", "--demo-ratio-steps", "-1", "--demo-ratio-steps: expected >= 0, got -1"),
        ("bc", "--min-delta", "-1", "--min-delta: expected >= 0, got -1.0"),
        ("r2d2", "--learning-rate", "1e30", "--learning-rate: expected <= 1, got 1e+30"),
        ("r2d2", "--adam-eps", "2", "--adam-eps: expected <= 1, got 2"),
        ("reactor", "--critic-weight", "1e30", "--critic-weight: expected <= 1000, got 1e+30"),
        (
            "reactor",
            "--learning-rate-final",
            "1e30",
            "--learning-rate-final: expected <= 1, got 1e+30",
        ),
        ("ppo", "--lr-policy", "1e30", "--lr-policy: expected <= 1, got 1e+30"),
    ],
)
def test_probabilities_and_ranges_are_checked_up_front(algo, flag, value, expected, tmp_path,
                                                       capsys):  # fmt: skip
    run = tmp_path / "run"
    assert _error(_train(algo, flag, value, run=run), capsys) == expected
    assert not run.exists()


def test_min_replay_above_the_capacity_is_refused(tmp_path, capsys):
    line = _error(_train("r2d2", "--min-replay", "100", "--replay-capacity", "50",
                         run=tmp_path / "r"), capsys)  # fmt: skip
    assert line.startswith("--min-replay: expected <= --replay-capacity (50)")
    assert "would never start" in line


def test_min_replay_beyond_the_budget_warns_once(tmp_path, capsys):
    argv = ["train", "r2d2", *FLAGS, "--run-dir", str(tmp_path / "r"), "--min-replay", "500",
            "--replay-capacity", "1000", "--total-env-steps", "60"]  # fmt: skip
    assert main(argv) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("demostudio: warning: --min-replay 500: ")
    assert "--total-env-steps is 60" in err[0]


def test_a_diverging_loss_stops_the_run_in_one_line_naming_the_flag(tmp_path, capsys):
    run = tmp_path / "run"
    argv = ["train", "dqfd", "--env", "CartPole-v1", "--demos", "demos/CartPole-v1",
            "--lambda-l2", "1e30", "--pretrain-updates", "5", "--run-dir", str(run),
            "--no-progress", "--device", "cpu"]  # fmt: skip
    line = _error(argv, capsys)
    assert line.startswith("training diverged: the ") and "(check --lambda-l2 1e+30)" in line
    assert "[" not in line  # no array
    assert not run.exists()  # failed before anything useful was saved


def test_the_diverged_line_names_the_changed_fields_of_any_algorithm():
    from agents.core.learner import diverged_message
    from agents.reactor.config import ReactorConfig
    from agents.rnd_ppo.config import RNDPPOConfig

    hint = ReactorConfig(entropy_weight=0.5, eval_episodes=9).divergence_hint()
    line = diverged_message(hint, 4, "loss", 1.0)
    assert line == "training diverged: the loss became 1.0 at update 4 (check --entropy-weight 0.5)"
    line = diverged_message(RNDPPOConfig().divergence_hint(), 2, "gradient norm", float("inf"))
    assert line.endswith("at update 2 (lower --lr-policy (now 0.0001))")
    hint = RNDPPOConfig(vf_coef=4.0, bc_coef=2.0).divergence_hint()
    line = diverged_message(hint, 2, "loss", float("nan"))
    assert line.endswith("(check --vf-coef 4, --bc-coef 2)")


def test_a_run_that_fails_saves_no_final_checkpoint(tmp_path, capsys, monkeypatch):
    """Failing after a periodic checkpoint: the step checkpoints stay, no final.pt, a
    ``failed`` row in metrics.jsonl; evaluate picks the step checkpoint and plot says so."""
    run = tmp_path / "run"
    calls = []

    def fail_later(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise ValueError("something broke")

    monkeypatch.setattr(loop_module, "prune_checkpoints", fail_later)
    argv = ["train", "r2d2", *FLAGS, "--run-dir", str(run), "--checkpoint-every", "100",
            "--eval-every", "50", "--total-env-steps", "100000"]  # fmt: skip
    assert _error(argv, capsys) == "something broke"
    assert not (run / "checkpoints" / "final.pt").exists()
    found = latest_checkpoint(run)
    assert found is not None and found.name != "final.pt"
    assert load_checkpoint(found)["interrupted"] is False
    last = read_metrics(run)[-1]
    assert last["kind"] == "failed" and last["error"] == "ValueError: something broke"
    monkeypatch.undo()
    assert main(["plot", str(run), "--out", str(tmp_path / "c.png")]) == 0
    assert "the run failed at" in capsys.readouterr().err


def test_a_run_that_fails_between_checkpoints_keeps_its_progress(tmp_path, capsys, monkeypatch):
    """No periodic checkpoint yet when it fails: its state is saved as a step checkpoint at
    the failure (not final.pt), and --resume continues from there."""
    run = tmp_path / "run"
    evals = []
    real = run_module._Shell.evaluate

    def fail_second(self, env_steps):
        evals.append(env_steps)
        if len(evals) == 2:
            raise ValueError("env broke")
        return real(self, env_steps)

    monkeypatch.setattr(run_module._Shell, "evaluate", fail_second)
    argv = ["train", "r2d2", *FLAGS, "--run-dir", str(run), "--checkpoint-every", "100000",
            "--eval-every", "50", "--total-env-steps", "100000"]  # fmt: skip
    assert _error(argv, capsys) == "env broke"
    found = latest_checkpoint(run)
    assert found is not None and found.name != "final.pt"
    steps = load_checkpoint(found)["counters"]["env_steps"]
    assert steps == evals[-1] > 0
    monkeypatch.undo()
    resumed = ["train", "r2d2", "--run-dir", str(run), "--resume", "--no-progress",
               "--total-env-steps", str(steps + 20), "--eval-every", "0"]  # fmt: skip
    assert main(resumed) == 0
    assert load_checkpoint(run / "checkpoints" / "final.pt")["counters"]["env_steps"] > steps


def test_a_run_that_fails_before_its_first_step_leaves_no_folder(tmp_path, capsys, monkeypatch):
    run = tmp_path / "run"

    def broken(self, ctx):
        raise ValueError("broken start")

    monkeypatch.setattr(get_algorithm("r2d2").agent_cls, "start", broken)
    assert _error(["train", "r2d2", *FLAGS, "--run-dir", str(run)], capsys) == "broken start"
    assert not run.exists()


# --- 3. negative numbers -----------------------------------------------------------------


@pytest.mark.parametrize("text", ["-1e3", "-1E+3", "-1000.", "-.5e4", "-1000"])
def test_negative_numbers_in_any_float_syntax_are_values(text):
    from agents.reactor.config import ReactorConfig
    from demostudio.cli.dataclass_args import config_parser

    ns = config_parser(ReactorConfig, prog="x").parse_args(["--v-min", text, "--v-max", "5"])
    assert ns.v_min == float(text) and ns.v_max == 5


def test_negative_infinity_is_refused_as_a_value_not_an_option(capsys):
    line = _error(["train", "reactor", "--env", "CartPole-v1", "--v-min", "-inf"], capsys)
    assert line.startswith("train reactor: argument --v-min: expected a finite number")


# --- 4. a flag of another algorithm ------------------------------------------------------


def test_a_flag_of_another_algorithm_is_one_line(capsys):
    line = _error(["train", "r2d2", "--env", "CartPole-v1", "--demos", "demos/CartPole-v1"],
                  capsys)  # fmt: skip
    assert line.startswith("train r2d2: --demos is not a flag of r2d2 (")
    assert "r2d3" in line and "bc" in line and line.endswith("take --demos)")
    line = _error(["train", "ppo", "--env", "CartPole-v1", "--batch-size", "32"], capsys)
    assert line.startswith("train ppo: --batch-size is not a flag of ppo (")
    assert "ppo," not in line


def test_a_mistyped_flag_gets_a_suggestion_and_bad_values_one_line(capsys):
    line = _error(["train", "r2d2", "--env", "CartPole-v1", "--hiden", "32"], capsys)
    assert line == "train r2d2: --hiden is not a flag of any algorithm (did you mean --hidden?)"
    line = _error(["train", "r2d2", "--hidden", "abc"], capsys)
    assert line.startswith("train r2d2: argument --hidden: invalid int value: 'abc'")


def test_coach_names_a_bad_flag_in_one_line_too(capsys):
    line = _error(["coach", "r2d3", "--env", "MountainCar-v0", "--hiden", "3"], capsys)
    assert line == "coach r2d3: --hiden is not a flag of any algorithm (did you mean --hidden?)"
    line = _error(["coach", "dqfd", "--env", "MountainCar-v0", "--actor-procs", "x"], capsys)
    assert line.startswith("coach dqfd: argument --actor-procs: invalid int value: 'x'")


def test_atari_flags_on_a_vector_env_warn_once(tmp_path, capsys):
    argv = ["train", "ppo", "--env", "CartPole-v1", "--frame-stack", "2", "--frame-skip", "2",
            "--num-envs", "2", "--rollout-length", "16", "--segment-length", "8",
            "--total-env-steps", "32", "--eval-episodes", "1", "--hidden", "16", "--lstm", "16",
            "--no-progress", "--no-tensorboard", "--device", "cpu", "--run-dir",
            str(tmp_path / "r")]  # fmt: skip
    assert main(argv) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "demostudio: warning: --frame-stack, --frame-skip: Atari (ALE) settings, no effect on "
        "CartPole-v1"
    ]


# --- 5. errors name the flags given --------------------------------------------------------


def test_period_and_trace_are_both_named(capsys):
    line = _error(["train", "r2d2", "--env", "CartPole-v1", "--n-step", "50", "--trace", "5"],
                  capsys)  # fmt: skip
    assert line.startswith("--period 10 / --trace 5: expected --period <= --trace")


def test_num_minibatches_names_the_segment_flags(capsys):
    argv = ["train", "rnd-ppo", "--env", "CartPole-v1", "--rollout-length", "1",
            "--segment-length", "1", "--num-envs", "1"]  # fmt: skip
    line = _error(argv, capsys)
    assert "--num-envs 1 x --rollout-length 1 / --segment-length 1" in line


def test_resume_with_other_sizes_names_the_flag(tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["train", "r2d2", *FLAGS, "--run-dir", str(run), "--total-env-steps", "30"]) == 0
    capsys.readouterr()
    line = _error(["train", "r2d2", "--resume", "--run-dir", str(run), "--hidden", "32"], capsys)
    assert line == (
        f"--resume: the run in {run} was trained with --hidden 16 (given --hidden 32): drop the "
        "flag or use another --run-dir"
    )
    line = _error(["train", "r2d2", "--resume", "--run-dir", str(run), "--no-recurrent"], capsys)
    assert "was trained with --recurrent (given --no-recurrent)" in line


def test_ppo_says_it_found_a_run_to_resume(tmp_path, capsys):
    run = tmp_path / "run"
    flags = ["--env", "CartPole-v1", "--num-envs", "2", "--rollout-length", "16",
             "--segment-length", "8", "--eval-episodes", "1", "--no-progress",
             "--no-tensorboard", "--device", "cpu", "--run-dir", str(run)]  # fmt: skip
    assert main(["train", "ppo", *flags, "--hidden", "16", "--total-env-steps", "32"]) == 0
    capsys.readouterr()
    line = _error(["train", "ppo", *flags, "--hidden", "32", "--total-env-steps", "64"], capsys)
    assert line.startswith(f"--resume: found the run in {run} and tried to resume it (ppo ")
    assert "trained with --hidden 16 (given --hidden 32)" in line

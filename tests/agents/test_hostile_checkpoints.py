"""Run folders and checkpoints read as hostile input by ``evaluate``, ``watch`` and
``train --resume``: a special file is never opened, a file that is not a weights-only torch
archive is one line (no torch warning, no advice to unpickle), a config naming a module is
refused before anything is imported, declared network sizes are checked against the stored
weights before anything is allocated, and counters and --epsilon are checked."""

from __future__ import annotations

import os
import pickle
import warnings
from pathlib import Path

import pytest
import torch

from agents.core.agent import EnvInfo
from agents.core.checkpoint import CheckpointError, latest_checkpoint, load_replays, save_checkpoint
from agents.core.config import config_to_dict
from agents.core.networks import RecurrentNetwork
from agents.core.preprocess import make_preprocessor
from agents.core.restore import restore_agent
from agents.r2d2 import R2D2, R2D2Config
from demostudio.cli import main
from demostudio.episode import make_env

pytestmark = pytest.mark.timeout(60)  # a FIFO opened by mistake blocks: fail, do not hang


def _payload(**config) -> dict:
    cfg = R2D2Config(env="CartPole-v1", hidden=8, lstm=8, progress=False, tensorboard=False,
                     device="cpu", **config)  # fmt: skip
    agent = R2D2(cfg)
    env = make_env("CartPole-v1")
    specs = agent.network_specs(
        EnvInfo("CartPole-v1", env, make_preprocessor(env.observation_space))
    )
    nets = {k: RecurrentNetwork(s) for k, s in specs.items()}
    return {
        "algo": "r2d2",
        "config": config_to_dict(cfg),
        "counters": {"env_steps": 7, "updates": 1, "episodes": 0},
        "network_specs": {k: s.to_json() for k, s in specs.items()},
        "networks": {k: n.state_dict() for k, n in nets.items()},
    }


def _run_dir(tmp_path: Path, payload: dict | None = None) -> tuple[Path, Path]:
    run = tmp_path / "run"
    final = run / "checkpoints" / "final.pt"
    final.parent.mkdir(parents=True)
    if payload is not None:
        save_checkpoint(final, payload)
    return run, final


def _error_line(argv: list[str], capsys) -> str:
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("demostudio: error: "), lines
    assert "Traceback" not in captured.out + captured.err
    return lines[0]


def _evaluate(run: Path) -> list[str]:
    return ["evaluate", str(run), "--episodes", "1", "--device", "cpu"]


def test_a_module_env_id_is_refused_before_anything_is_imported(tmp_path, capsys, monkeypatch):
    marker = tmp_path / "imported"
    (tmp_path / "evil_env_mod.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    payload = _payload()
    payload["config"]["env"] = "evil_env_mod:Zen-v0"
    run, final = _run_dir(tmp_path, payload)
    line = _error_line(_evaluate(run), capsys)
    assert f"{final} [env]: expected a Gymnasium id" in line
    assert "no module:Env form" in line and "'evil_env_mod:Zen-v0'" in line
    assert not marker.exists()
    with pytest.raises(CheckpointError) as err:  # resume reads the same checkpoint
        restore_agent(run)
    assert err.value.field == "env"
    assert not marker.exists()


def _fifo(path: Path) -> None:
    os.mkfifo(path)


@pytest.mark.parametrize(
    "make, got",
    [
        (_fifo, "expected a checkpoint file, got a special file (FIFO, device)"),
        (lambda p: p.symlink_to("/dev/zero"), "expected a checkpoint file, got a special file"),
        (lambda p: p.mkdir(), "expected a checkpoint file, got a folder"),
        (
            lambda p: p.symlink_to("/gone/x.pt"),
            "expected a checkpoint file, got a link to a missing file ('/gone/x.pt')",
        ),
    ],
    ids=["fifo", "dev-zero", "folder", "dangling-link"],
)
def test_a_special_final_pt_is_one_line_for_evaluate_and_resume(tmp_path, capsys, make, got):
    run, final = _run_dir(tmp_path)
    make(final)
    assert f"{final}: {got}" in _error_line(_evaluate(run), capsys)
    argv = ["train", "r2d2", "--resume", "--run-dir", str(run), "--env", "CartPole-v1"]
    assert f"{final}: {got}" in _error_line(argv, capsys)
    assert sorted(p.name for p in run.rglob("*")) == ["checkpoints", "final.pt"]


def test_a_fifo_among_the_checkpoints_is_passed_over(tmp_path):
    run, final = _run_dir(tmp_path, _payload())
    os.mkfifo(final.with_name("step-0000009999.pt"))
    assert latest_checkpoint(run) == final
    assert restore_agent(run).path == str(final)
    os.mkfifo(final.with_name("replay.npz"))
    with pytest.raises(CheckpointError, match=r"replay\.npz: expected .* special file"):
        load_replays(run)


class _RunsCode:
    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _truncated(p: Path) -> None:
    save_checkpoint(p, _payload())
    p.write_bytes(p.read_bytes()[:5000])


@pytest.mark.parametrize(
    "write, got",
    [
        (lambda p, m: p.write_bytes(b"\x00garbage" * 100), "not a zip archive"),
        (lambda p, m: p.write_bytes(pickle.dumps({"x": _RunsCode(m)})), "not a zip archive"),
        (lambda p, m: torch.save({"algo": "bc", "x": _RunsCode(m)}, p), "names code to run"),
        (lambda p, m: _truncated(p), "a damaged archive"),
    ],
    ids=["garbage", "pickle", "pickle-in-zip", "truncated"],
)
def test_a_file_that_is_not_a_checkpoint_is_one_line(tmp_path, capsys, write, got):
    run, final = _run_dir(tmp_path)
    marker = tmp_path / "ran"
    write(final, marker)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = _error_line(_evaluate(run), capsys)
    assert caught == []  # torch warns of pickle protocols before refusing
    assert line.startswith(f"demostudio: error: {final}: expected a DemoStudio checkpoint")
    assert "weights-only tensors" in line and got in line
    assert "weights_only" not in line and "Warning" not in line
    assert not marker.exists()


def test_declared_sizes_are_checked_against_the_stored_weights(tmp_path, capsys):
    payload = _payload()
    payload["network_specs"]["main"]["hidden"] = 1_000_000  # 4 TB of encoder weights
    run, final = _run_dir(tmp_path, payload)
    line = _error_line(_evaluate(run), capsys)
    assert f"{final} [networks.main.encoder." in line
    assert "expected shape (1000000, " in line and "got (8, " in line


def test_resume_checks_the_saved_configs_sizes_before_building(tmp_path, capsys):
    payload = _payload()
    payload["config"]["lstm"] = 1_000_000  # an LSTM of 16e12 weights
    run, final = _run_dir(tmp_path, payload)
    before = final.read_bytes()
    argv = ["train", "r2d2", "--resume", "--run-dir", str(run), "--total-env-steps", "50"]
    line = _error_line(argv, capsys)
    # refused by the config's bounds, naming the checkpoint (the flag was not given here)
    assert f"{final}: its saved config: --lstm: expected <= 4096, got 1000000" in line
    assert final.read_bytes() == before
    assert sorted(p.name for p in run.rglob("*")) == ["checkpoints", "final.pt"]


def test_counters_must_be_integers(tmp_path, capsys):
    payload = _payload()
    payload["counters"]["env_steps"] = "x"
    run, final = _run_dir(tmp_path, payload)
    line = _error_line(_evaluate(run), capsys)
    assert line.endswith(f"{final} [counters.env_steps]: expected an integer >= 0, got 'x'")


def test_env_kwargs_must_be_a_json_object_and_never_choose_the_render_mode(tmp_path, capsys):
    payload = _payload(env_kwargs='{"render_mode": "human", "max_episode_steps": 50}')
    run, final = _run_dir(tmp_path, payload)
    agent = restore_agent(run)
    assert agent.env_kwargs == {"max_episode_steps": 50}
    env = agent.make_env()
    assert env.render_mode is None  # no window in a headless evaluate
    env.close()
    payload["config"]["env_kwargs"] = "{not json"
    save_checkpoint(final, payload)
    line = _error_line(_evaluate(run), capsys)
    assert line.endswith(f"{final} [env_kwargs]: expected a JSON object as text, got '{{not json'")


@pytest.mark.parametrize("seed", [-1, 2**63, "7", True])
def test_a_config_seed_no_flag_would_take_is_one_line(tmp_path, capsys, seed):
    """A run's config seed seeds torch and the envs (with offsets added) on --resume: one
    gymnasium or torch refuses is named before anything is made."""
    payload = _payload()
    payload["config"]["seed"] = seed
    run, final = _run_dir(tmp_path, payload)
    line = _error_line(_evaluate(run), capsys)
    assert line.endswith(f"{final} [seed]: expected an integer from 0 to 2**63-1, got {seed!r}")


@pytest.mark.parametrize("epsilon", ["2", "-0.1"])
def test_epsilon_outside_0_1_is_refused(tmp_path, capsys, epsilon):
    run, _ = _run_dir(tmp_path, _payload())
    line = _error_line([*_evaluate(run), "--epsilon", epsilon], capsys)
    assert line.startswith("demostudio: error: --epsilon: expected in [0, 1], got ")
    argv = ["watch", str(run), "--headless", "--record", str(tmp_path / "rec"), "--epsilon"]
    assert "--epsilon: expected in [0, 1]" in _error_line([*argv, epsilon], capsys)
    assert not (tmp_path / "rec").exists()


def test_epsilon_nan_is_refused_by_the_parser(tmp_path, capsys):
    run, _ = _run_dir(tmp_path, _payload())
    with pytest.raises(SystemExit) as exit_:
        main([*_evaluate(run), "--epsilon", "nan"])
    assert exit_.value.code == 2
    assert "argument --epsilon: expected a finite number, got 'nan'" in capsys.readouterr().err


def test_a_saved_config_with_a_number_that_is_not_finite_is_refused_on_resume(tmp_path, capsys):
    payload = _payload()
    payload["config"]["learning_rate"] = float("nan")  # JSON and torch both carry NaN
    run, final = _run_dir(tmp_path, payload)
    before = final.read_bytes()
    argv = ["train", "r2d2", "--resume", "--run-dir", str(run), "--total-env-steps", "50"]
    line = _error_line(argv, capsys)
    assert line.endswith("--learning-rate: expected a finite number, got nan"), line
    assert final.read_bytes() == before


def test_resume_of_a_folder_without_checkpoints_is_named_before_the_flags(tmp_path, capsys):
    """r2d3 needs --demos for a fresh run, not for a resume: a folder that holds no run says
    so, rather than asking for demos."""
    argv = ["train", "r2d3", "--env", "MountainCar-v0", "--resume", "--run-dir", str(tmp_path)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path}: --resume: expected a run folder with checkpoints, got none" in err
    assert "--demos" not in err and list(tmp_path.iterdir()) == []


def _watch(run: Path, tmp_path: Path) -> list[str]:
    return ["watch", str(run), "--headless", "--episodes", "1", "--record", str(tmp_path / "rec")]


@pytest.mark.parametrize(
    "field, value, says",
    [
        ("env_kwargs", '{"bogus": 1}', "[env_kwargs]: expected arguments the env runs with, got "
         '{"bogus": 1}: it fails when it is made (TypeError: CartPoleEnv.__init__() got an '
         "unexpected keyword argument 'bogus'"),
        ("env", "MountainCar-v0", "[env]: expected an env whose observation and action spaces "
         "match the network's (obs: vector (4,); 2 actions), got 'MountainCar-v0' "
         "(obs: vector (2,); 3 actions)"),
    ],
)  # fmt: skip
def test_a_config_env_the_network_cannot_play_is_one_line(tmp_path, capsys, field, value, says):
    """A config whose env_kwargs the env refuses was the env's TypeError traceback; CartPole
    weights on MountainCar were torch's size-mismatch traceback mid-episode. The env is made
    once on load: one line naming the file and the field, nothing recorded."""
    payload = _payload()
    payload["config"][field] = value
    run, final = _run_dir(tmp_path, payload)
    assert f"{final} {says}" in _error_line(_evaluate(run), capsys)
    assert f"{final} {says}" in _error_line(_watch(run, tmp_path), capsys)
    assert not (tmp_path / "rec").exists()


def _extra_key(p: dict) -> None:
    p["networks"]["main"]["evil"] = torch.zeros(3)


def _nan_weight(p: dict) -> None:
    key = next(k for k, v in p["networks"]["main"].items() if v.is_floating_point())
    p["networks"]["main"][key][0] = float("nan")


def _int_weight(p: dict) -> None:
    key = next(k for k, v in p["networks"]["main"].items() if v.is_floating_point())
    p["networks"]["main"][key] = p["networks"]["main"][key].to(torch.int64)


@pytest.mark.parametrize(
    "mutate, says",
    [
        (_extra_key, "[networks.main]: expected only the network's weights, got 1 more: 'evil'"),
        (_nan_weight, "[networks.main.encoder.encoders.obs.net.0.weight]: expected finite "
         "weights, got NaN or infinity"),
        (_int_weight, "[networks.main.encoder.encoders.obs.net.0.weight]: expected "
         "torch.float32 values, got torch.int64"),
    ],
    ids=["extra-key", "nan", "int"],
)  # fmt: skip
def test_weights_a_run_never_writes_are_one_line(tmp_path, capsys, mutate, says):
    """An extra weight was torch's two-line load_state_dict error; NaN weights played as a
    policy ("mean return 11.00"). Each is one line naming the file and the field, for
    evaluate and watch."""
    payload = _payload()
    mutate(payload)
    run, final = _run_dir(tmp_path, payload)
    assert _error_line(_evaluate(run), capsys).endswith(f"{final} {says}")
    assert _error_line(_watch(run, tmp_path), capsys).endswith(f"{final} {says}")
    assert not (tmp_path / "rec").exists()


@pytest.mark.parametrize(
    "field, value, says",
    [
        ("format", "other", "expected a DemoStudio checkpoint ('demostudio-agent'), got 'other'"),
        ("version", 99, "written with checkpoint version 99; this DemoStudio reads up to 2: "
         "upgrade demostudio to open it"),
        ("version", "2", "expected a checkpoint version (an integer >= 1), got '2'"),
    ],
)  # fmt: skip
def test_a_checkpoint_of_another_format_or_a_newer_version_is_one_line(
    tmp_path, capsys, field, value, says
):
    """``format: "other"`` and ``version: 99`` loaded and played; they are refused as an
    episode file's schema_version is, naming the field, for evaluate and watch."""
    payload = _payload()
    payload[field] = value
    run, final = _run_dir(tmp_path, payload)
    assert _error_line(_evaluate(run), capsys).endswith(f"{final} [{field}]: {says}")
    assert _error_line(_watch(run, tmp_path), capsys).endswith(f"{final} [{field}]: {says}")
    assert not (tmp_path / "rec").exists()


def test_what_a_run_writes_carries_its_format_and_version_and_loads(tmp_path, capsys):
    """The refusals above never touch a checkpoint this code writes (nor one without the
    fields, as the previous format wrote)."""
    from agents.core.checkpoint import CHECKPOINT_FORMAT, CHECKPOINT_VERSION

    run = tmp_path / "run"
    argv = ["train", "r2d2", "--env", "CartPole-v1", "--total-env-steps", "40", "--hidden", "8",
            "--lstm", "8", "--device", "cpu", "--run-dir", str(run), "--no-progress",
            "--no-tensorboard", "--eval-every", "0"]  # fmt: skip
    assert main(argv) == 0
    final = run / "checkpoints" / "final.pt"
    saved = torch.load(final, weights_only=True)
    assert (saved["format"], saved["version"]) == (CHECKPOINT_FORMAT, CHECKPOINT_VERSION)
    assert restore_agent(run).path == str(final)
    assert main([*_evaluate(run)]) == 0
    assert "mean return" in capsys.readouterr().out

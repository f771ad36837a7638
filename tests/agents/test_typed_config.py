"""The config is read by type, not probed: no ``getattr``/``hasattr`` on a config in
``agents/`` or the training commands, each part made from its own group's values
(``ConfigGroup.group``), and the memory estimate fed by the agent's stated sizes."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from agents.core.config import ActorProcsConfig, DemoMixConfig, InteractConfig, RunConfig
from agents.r2d3.config import R2D3Config

ROOT = Path(__file__).resolve().parents[2]
PROBE = re.compile(r"\b(getattr|hasattr)\(\s*(self\.|ctx\.|agent\.|run_)?(cfg|config|settings)\b")
SELF_PROBE = re.compile(r"\b(getattr|hasattr)\(\s*self\s*,")


def _sources() -> list[Path]:
    files = sorted((ROOT / "agents").rglob("*.py"))
    cli = ROOT / "demostudio/cli"
    return [*files, cli / "train_cmds.py", cli / "checkpoint_cmds.py", cli / "coach_cmd.py"]


def test_no_config_is_probed():
    found = []
    for path in _sources():
        text = path.read_text(encoding="utf-8")
        config_module = "/config" in path.as_posix() or path.name == "coach_cmd.py"
        for n, line in enumerate(text.splitlines(), 1):
            if PROBE.search(line) or (config_module and SELF_PROBE.search(line)):
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert found == []


def test_the_memory_estimate_reads_no_config():
    text = (ROOT / "agents/core/footprint.py").read_text(encoding="utf-8")
    assert "agents.core.config" not in text and "cfg" not in text


def test_a_group_view_holds_that_group_alone():
    cfg = R2D3Config(env="CartPole-v1", seed=7, demo_ratio=0.5, progress=False, actor_procs=2)
    run = cfg.group(RunConfig)
    assert type(run) is RunConfig
    assert (run.env, run.seed, run.progress) == ("CartPole-v1", 7, False)
    assert not hasattr(run, "demo_ratio")  # the part sees nothing else of the config
    assert cfg.group(DemoMixConfig).demo_ratio == 0.5
    assert cfg.group(ActorProcsConfig).actor_procs == 2
    names = {f.name for f in dataclasses.fields(InteractConfig)}
    interact = cfg.group(InteractConfig)
    assert {n: getattr(interact, n) for n in names} == {n: getattr(cfg, n) for n in names}


def test_a_group_the_config_lacks_is_refused():
    from agents.bc.config import BCConfig

    with pytest.raises(TypeError, match="InteractConfig"):
        BCConfig().group(InteractConfig)

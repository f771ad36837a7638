"""Ctrl-C during training: the interrupted state is saved and marked as such (final.pt,
metrics.jsonl), evaluate, watch and plot say so, and a resumed run that finishes is no
longer reported as interrupted."""

from __future__ import annotations

import agents.core.loop as loop_module
from agents.core.checkpoint import load_checkpoint
from agents.core.logger import read_metrics
from demostudio.cli import main
from tests.agents.test_crash_resume import FLAGS


def test_ctrl_c_saves_a_marked_checkpoint_and_resume_clears_it(tmp_path, monkeypatch, capsys):
    run = tmp_path / "run"

    def ctrl_c(*args, **kwargs):  # Ctrl-C right after the first periodic checkpoint
        raise KeyboardInterrupt

    monkeypatch.setattr(loop_module, "prune_checkpoints", ctrl_c)
    argv = ["train", "r2d2", *FLAGS, "--run-dir", str(run), "--checkpoint-every", "100",
            "--eval-every", "50", "--total-env-steps", "100000"]  # fmt: skip
    assert main(argv) == 130
    err = capsys.readouterr().err.strip().splitlines()
    final = run / "checkpoints" / "final.pt"
    payload = load_checkpoint(final)
    steps = payload["counters"]["env_steps"]
    assert payload["interrupted"] is True and 100 <= steps < 1000
    assert err == [
        f"demostudio: interrupted at {steps} env steps, saved {final}; "
        f"`demostudio train r2d2 --run-dir {run} --resume` continues it"
    ]
    last = read_metrics(run)[-1]
    assert last["kind"] == "interrupted" and last["env_steps"] == steps

    notice = f"interrupted at {steps} env steps"
    assert main(["evaluate", str(run), "--episodes", "1", "--device", "cpu"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"demostudio: note: {final}: its run was {notice} (not finished)"]
    out = tmp_path / "watch"
    assert main(["watch", str(final), "--headless", "--record", str(out), "--episodes", "1",
                 "--device", "cpu"]) == 0  # fmt: skip
    assert notice in capsys.readouterr().err
    assert main(["plot", str(run), "--out", str(tmp_path / "c.png")]) == 0
    assert capsys.readouterr().err.strip().splitlines() == [
        f"demostudio: note: {run}: the run was {notice} (not finished)"
    ]

    monkeypatch.undo()  # the resumed run finishes: nothing says interrupted any more
    resume = ["train", "r2d2", "--run-dir", str(run), "--resume", "--total-env-steps",
              str(steps + 100)]  # fmt: skip
    assert main(resume) == 0
    payload = load_checkpoint(final)
    assert payload["interrupted"] is False and payload["counters"]["env_steps"] >= steps + 100
    kinds = [r["kind"] for r in read_metrics(run)]
    assert kinds.index("resume") > kinds.index("interrupted")
    capsys.readouterr()
    assert main(["evaluate", str(run), "--episodes", "1", "--device", "cpu"]) == 0
    assert main(["plot", str(run), "--out", str(tmp_path / "c.png")]) == 0
    assert "interrupted" not in capsys.readouterr().err

"""Live coaching driven by real pygame events: training runs in its thread while the window
plays the current policy; a take-over (T) puts demo sequences of exactly the person's steps
into the running trainer's demo replay, the saved file marks them as the person's, closing
ends training with a final checkpoint, and --resume reads the corrections back."""

from __future__ import annotations

import time

import numpy as np
import pygame
import pytest

from demostudio.cli import CommandError, main
from demostudio.episode import load_episode, person_mask

from .helpers import FAST, post_key, tap, ticks

pytest.importorskip("torch")

TINY = [
    "--env", "MountainCar-v0", "--num-actors", "1", "--hidden", "16", "--lstm", "16",
    "--batch-size", "4", "--min-replay", "4", "--env-steps-per-update", "4",
    "--burn-in", "2", "--trace", "6", "--period", "3", "--eval-every", "0",
    "--eval-episodes", "1", "--no-progress", "--no-tensorboard", "--device", "cpu",
    "--total-env-steps", "1000000", "--player", "dee", "--fps", str(FAST),
]  # fmt: skip


def _wait(condition, seconds: float = 30.0) -> None:
    end = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < end, "timed out waiting for the trainer"
        time.sleep(0.02)


def _coach(tmp_path, *extra: str, algo: str = "r2d3"):
    from demostudio.cli.coach_cmd import parse_coach, start_coach

    entry, cfg, settings = parse_coach(algo, [*TINY, "--run-dir", str(tmp_path / "run"), *extra])
    coaching = start_coach(entry, cfg, settings)
    coaching.session.opts.countdown = 0
    coaching.session.new_episode()
    return coaching


def test_a_takeover_goes_into_the_running_trainers_demo_replay(tmp_path):
    from demostudio.cli.coach_cmd import stop_coach

    coaching = _coach(tmp_path)
    link, s = coaching.link, coaching.session
    _wait(lambda: link.progress.env_steps > 0)  # the trainer runs beside the window
    ticks(s, 12)  # the agent drives
    assert link.inserted == 0 and "AGENT (policy:r2d3) drives" in s.hud_info().control
    tap(pygame.K_t)  # take over ...
    post_key(pygame.K_RIGHT)
    ticks(s, 9)
    post_key(pygame.K_RIGHT, down=False)
    tap(pygame.K_t)  # ... and hand back: the stretch's sequences go at once
    ticks(s, 1)
    assert link.stretches == 1
    _wait(lambda: link.inserted > 0)
    _wait(lambda: link.progress.demo_sequences == link.inserted)
    assert link.progress.updates > 0 and "corrections: 1 stretch" in " ".join(link.status_lines())
    ticks(s, 3)
    s.quit(True)  # close the window, keeping the corrected episode
    s.close()
    result = stop_coach(coaching)

    assert (result.run_dir / "checkpoints" / "final.pt").exists()
    demo_replay = link.acting.agent.demo_replay
    assert len(demo_replay) == link.inserted > 0  # no demo files: the corrections only
    assert demo_replay.sample(4).batch.mask.any()
    saved = s.result().saved
    assert len(saved) == 1 and saved[0].parent.parent == coaching.corrections
    data = load_episode(saved[0])
    assert data.actor_names == ["policy:r2d3", "person:dee"]
    mask = person_mask(data.actors, data.actor_names)
    np.testing.assert_array_equal(mask, [False] * 12 + [True] * 9 + [False] * 4)
    assert data.actions[12:21].tolist() == [2] * 9  # RIGHT


def test_the_demo_sequences_hold_exactly_the_persons_steps(tmp_path):
    from demostudio.cli.coach_cmd import stop_coach

    coaching = _coach(tmp_path)
    link, s = coaching.link, coaching.session
    sent = []
    submit = link.submit
    link.submit = lambda seqs: (sent.append(seqs), submit(seqs))
    ticks(s, 5)
    tap(pygame.K_t)
    post_key(pygame.K_LEFT)
    ticks(s, 7)  # steps 5..11 are the person's
    tap(pygame.K_t)
    ticks(s, 10)
    tap(pygame.K_t)  # a second take-over in the same episode: steps 22..25
    ticks(s, 4)
    tap(pygame.K_t)  # hand back and ...
    tap(pygame.K_END)  # ... end and save the episode: the rest of the sequences go
    s.tick()
    s.quit(False)
    s.close()
    stop_coach(coaching)

    data = load_episode(s.result().saved[0])
    obs = np.asarray(data.observations, np.float32)
    index = {obs[t].tobytes(): t for t in range(len(obs))}
    learned: list[int] = []
    for seqs in sent:
        for b in range(len(seqs)):
            for j in np.flatnonzero(seqs.mask[b]):
                t = index[seqs.obs["obs"][b, j].tobytes()]
                assert seqs.action[b, j] == data.actions[t]
                if j >= 2:  # after the burn-in
                    learned.append(t)
    person = np.flatnonzero(person_mask(data.actors, data.actor_names)).tolist()
    assert person == [*range(5, 12), *range(22, 26)]
    assert sorted(set(learned)) == person
    assert link.stretches == 2


def test_resume_reads_the_corrections_back_and_bc_is_refused(tmp_path):
    from demostudio.cli.coach_cmd import stop_coach

    coaching = _coach(tmp_path)
    s = coaching.session
    tap(pygame.K_t)
    post_key(pygame.K_RIGHT)
    ticks(s, 6)
    s.quit(True)
    s.close()
    stop_coach(coaching)

    again = _coach(tmp_path, "--resume")
    assert coaching.corrections in again.link.acting.cfg.demos
    assert again.link.progress.demo_sequences > 0  # the saved corrections, rebuilt
    assert again.link.acting.cfg.demo_steps == "person"
    again.session.quit(False)
    again.session.close()
    stop_coach(again)

    from demostudio.cli.coach_cmd import parse_coach

    with pytest.raises(CommandError, match="expected an algorithm with a demo replay"):
        parse_coach("bc", ["--env", "CartPole-v1"])


def test_cli_errors_are_one_line(capsys):
    assert main(["coach", "r2d2", "--env", "CartPole-v1"]) == 2
    err = capsys.readouterr().err
    assert "expected an algorithm with a demo replay" in err and "r2d3" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("algo", "extra"),
    [("dqfd", ("--pretrain-updates", "10", "--pretrain-log-every", "5")), ("sqil", ())],
)
def test_dqfd_with_demo_files_and_sqil_without(algo, extra, tmp_path, record_demos):
    from demostudio.cli.coach_cmd import stop_coach

    demos = record_demos(tmp_path / "demos", "MountainCar-v0", 1) if algo == "dqfd" else None
    flags = ("--demos", str(demos)) if demos else ()
    coaching = _coach(tmp_path, *flags, *extra, algo=algo)
    link, s = coaching.link, coaching.session
    _wait(lambda: link.progress.demo_sequences > 0 or not demos)  # the files' sequences
    before = link.progress.demo_sequences
    tap(pygame.K_t)
    post_key(pygame.K_LEFT)
    ticks(s, 8)
    tap(pygame.K_t)
    ticks(s, 1)
    _wait(lambda: link.inserted > 0 and link.progress.demo_sequences == before + link.inserted)
    s.quit(True)
    s.close()
    result = stop_coach(coaching)
    assert (result.run_dir / "checkpoints" / "final.pt").exists()
    if algo == "dqfd":
        assert (result.run_dir / "checkpoints" / "pretrained.pt").exists()


def test_the_command_end_to_end(tmp_path, monkeypatch, capsys):
    """``demostudio coach``: the window's own loop, driven by events posted as it ticks;
    closing the window (QUIT) keeps the corrected episode and ends training."""
    from demostudio.play.session import PlaySession

    tick = PlaySession.tick
    script = {3: [(pygame.K_t, True), (pygame.K_RIGHT, True)],
              10: [(pygame.K_RIGHT, False), (pygame.K_t, True)]}  # fmt: skip
    count = {"n": 0}

    def scripted_tick(self):
        count["n"] += 1
        for key, down in script.get(count["n"], []):
            post_key(key, down)
            if key == pygame.K_t:
                post_key(key, False)
        if count["n"] == 14:
            pygame.event.post(pygame.event.Event(pygame.QUIT))
        return tick(self)

    monkeypatch.setattr(PlaySession, "tick", scripted_tick)
    run = tmp_path / "run"
    assert main(["coach", "r2d3", *TINY, "--run-dir", str(run)]) == 0
    out = capsys.readouterr().out
    assert "closing the window ends training" in out
    assert "1 corrected stretch (" in out and "1 episode saved" in out
    (saved,) = sorted((run / "corrections").rglob("*.h5"))
    data = load_episode(saved)
    mask = person_mask(data.actors, data.actor_names)
    assert mask.sum() == 7 and not mask[:2].any()
    assert (run / "checkpoints" / "final.pt").exists()


def test_sigterm_saves_the_coached_run_marked_interrupted(tmp_path, monkeypatch, capsys):
    """``kill -TERM`` of ``demostudio coach`` (the window's thread gets it): the trainer stops
    unfinished, final.pt is marked interrupted, and the resume hint is printed (exit 143)."""
    import os
    import signal

    from agents.core.checkpoint import load_checkpoint
    from agents.core.logger import read_metrics
    from demostudio.play.session import PlaySession

    tick = PlaySession.tick
    count = {"n": 0}

    def scripted_tick(self):
        count["n"] += 1
        if count["n"] == 5:
            os.kill(os.getpid(), signal.SIGTERM)
        return tick(self)

    monkeypatch.setattr(PlaySession, "tick", scripted_tick)
    run = tmp_path / "run"
    before = signal.getsignal(signal.SIGTERM)  # SIG_DFL, or Ray's from an earlier test's init
    assert main(["coach", "r2d3", *TINY, "--run-dir", str(run)]) == 143
    final = run / "checkpoints" / "final.pt"
    payload = load_checkpoint(final)
    steps = payload["counters"]["env_steps"]
    assert payload["interrupted"] is True
    last = read_metrics(run)[-1]
    assert last == {**last, "kind": "interrupted", "env_steps": steps, "signal": "SIGTERM"}
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"demostudio: interrupted by SIGTERM at {steps} env steps, saved {final}; "
        f"`demostudio coach r2d3 --run-dir {run} --resume` continues it"
    )
    assert signal.getsignal(signal.SIGTERM) is before  # the command's handlers went

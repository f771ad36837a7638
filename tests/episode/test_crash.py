"""A recording process killed with SIGKILL mid-episode loses only that episode's unflushed tail."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

from demostudio.cli import main
from demostudio.episode import find_partials, load_episode, scan, validate, verify_episode

CHILD = textwrap.dedent(
    """
    import sys, time
    from demostudio.controllers import scripted_controller
    from demostudio.episode import RecordEpisodes, make_env

    out = sys.argv[1]
    env = RecordEpisodes(make_env("MountainCar-v0", render_mode="rgb_array"), out,
                         controller="policy:scripted")
    ctrl = scripted_controller("MountainCar-v0")
    for episode in range(3):
        obs, info = env.reset(seed=episode)
        print("started", episode, flush=True)
        done = False
        while not done:
            if episode == 2:
                time.sleep(0.02)  # the third episode is slow, so it is killed mid-way
            obs, r, term, trunc, info = env.step(ctrl.act(env, obs))
            done = term or trunc
        print("saved", episode, flush=True)
    print("all done", flush=True)
    """
)


def test_sigkill_mid_episode(tmp_path, capsys):
    out = tmp_path / "demos"
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(out)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "SDL_VIDEODRIVER": "dummy"},
    )
    lines = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline().strip()
        lines.append(line)
        if line == "started 2":
            break
    assert lines[-1] == "started 2", lines
    time.sleep(1.5)  # past the writer's one-second flush
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL

    # Every earlier episode reads back intact and valid.
    entries = scan(out)
    finished = [e for e in entries if not e.partial]
    assert len(finished) == 2
    for e in finished:
        assert e.error is None and validate(e.path) == []
        assert e.summary.terminated and not e.summary.recovered
        assert verify_episode(e.path).ok
        assert len(load_episode(e.path)) == e.summary.length

    # The killed one is left as a .partial, flagged by ls, and recovered (or reported).
    partials = find_partials(out)
    assert len(partials) == 1
    assert main(["ls", str(out)]) == 0
    assert "PARTIAL" in capsys.readouterr().out
    code = main(["recover", str(out)])
    text = capsys.readouterr().out
    if code == 0:
        assert "recovered" in text
        recovered = [e for e in scan(out) if e.summary and e.summary.recovered]
        assert len(recovered) == 1
        ep = recovered[0]
        assert validate(ep.path) == [] and ep.summary.truncated and ep.summary.length > 0
        # What was kept is exactly what was played: it re-simulates.
        assert verify_episode(ep.path).ok
    else:
        assert "unusable" in text and str(partials[0]) in text

"""`demostudio watch RUN` in the play window (SDL dummy driver) on an Atari RND-PPO run: the
window builds its env through the agent (grey resized frames, stacked), as the headless
watch and evaluate do, so the policy sees what it was trained on."""

from __future__ import annotations

from agents.core.run import train
from agents.rnd_ppo import RNDPPO
from demostudio.cli import main
from demostudio.episode import read_summary
from tests.agents_rnd_ppo.helpers import tiny


def test_window_watch_of_an_atari_run_uses_the_agents_env(tmp_path, monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    monkeypatch.setenv("SDL_AUDIODRIVER", "dummy")
    cfg = tiny(tmp_path / "run", env="ALE/MontezumaRevenge-v5", frame_resize=42,
               frame_stack=3, total_env_steps=32, max_episode_frames=200)  # fmt: skip
    train(RNDPPO(cfg))
    seen: list[tuple[int, ...]] = []
    from agents.core import restore

    real = restore.restore_agent

    def watched(*args, **kwargs):  # records the observations the policy is handed
        agent = real(*args, **kwargs)
        act = agent.controller.act

        def act_seen(env, obs):
            seen.append(tuple(obs.shape))
            return act(env, obs)

        agent.controller.act = act_seen
        return agent

    monkeypatch.setattr(restore, "restore_agent", watched)
    win = tmp_path / "win"
    rc = main(["watch", str(tmp_path / "run"), "--episodes", "1", "--fps", "1000",
               "--record", str(win), "--device", "cpu", "--seed", "0"])  # fmt: skip
    assert rc == 0
    assert seen and set(seen) == {(3, 42, 42)}  # stacked grey frames, not raw RGB
    files = sorted(win.rglob("*.h5"))
    assert len(files) == 1 and read_summary(files[0]).length == len(seen) == 50

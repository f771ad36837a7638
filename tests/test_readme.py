"""Every `demostudio` command in the README's bash blocks runs as written, in order, on a copy
of the shipped demos, the way a new user would type them from a fresh clone.

What is adapted, and why:
* `FILE.h5` is the episode file the README names where it introduces the placeholder;
  `~/.local/share` (the recordings folder's default parent) is the copy's `$XDG_DATA_HOME`.
* Windows: `demostudio` (the launcher), `play`, `replay` and `coach` are skipped (they need
  a person; tests/play and tests/replay drive them headless); `watch RUN` runs in its headless
  mode (`--headless --record DIR`).
* Long commands get a small budget appended (a later flag overrides the README's): `train`
  `--total-env-steps 400 --eval-every 200 ...` (the resume 600), `evaluate` and `record`
  one episode, `compare` one seed and a 300-step budget; `train ppo|rnd-ppo` two envs and
  a 256-step budget of short rollouts.
* `make ...` lines (set-up, the test suite itself, lint) are not run here.
Default run: every command but `compare` (five algorithms), which is marked slow; about two
minutes on an idle two-core machine."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from demostudio.episode import read_summary

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

WINDOW_COMMANDS = {"launch", "play", "replay", "coach"}
SMALL_BUDGET = {
    "record": ["--episodes", "1"],
    "train": [
        "--total-env-steps", "400", "--eval-every", "200", "--eval-episodes", "1",
        "--checkpoint-every", "200",
        "--min-replay", "50", "--batch-size", "4", "--no-progress", "--no-tensorboard",
    ],
    "evaluate": ["--episodes", "1"],
    "watch": ["--episodes", "1", "--headless", "--record", "watched"],
    "compare": [
        "--seeds", "1", "--budget", "300", "--eval-every", "0", "--eval-episodes", "1",
        "--final-eval-episodes", "1", "--jobs", "1",
    ],
}  # fmt: skip
# On-policy agents have no replay: their budget is rollouts (a later flag overrides).
ON_POLICY = {"ppo", "rnd-ppo"}
ON_POLICY_BUDGET = [
    "--total-env-steps", "256", "--eval-every", "128", "--eval-episodes", "1",
    "--checkpoint-every", "128", "--num-envs", "2", "--rollout-length", "32",
    "--segment-length", "16", "--obs-norm-init-steps", "4", "--bc-pretrain-updates", "5",
    "--max-episode-frames", "400", "--no-progress", "--no-tensorboard",
]  # fmt: skip
SLOW = {"compare"}
DATA_HOME = "~/.local/share"


def bash_commands(text: str) -> list[list[str]]:
    """The commands of every ```bash block, continuation lines joined, comments dropped."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words:
                commands.append(words)
    return commands


def placeholder_file(text: str) -> str:
    """The episode file the README says `FILE.h5` stands for."""
    found = re.search(r"`FILE\.h5`[^`]*stands for[^`]*`([^`]+\.h5)`", text)
    assert found, "README: say which shipped episode `FILE.h5` stands for"
    return found.group(1)


def adapted(words: list[str], file: str) -> list[str] | None:
    """The argv to run for a README command, or None when it is not run here."""
    if words[0] != "demostudio":
        return None
    args = [file if w == "FILE.h5" else w for w in words[1:]]
    command = args[0] if args else "launch"
    if command in WINDOW_COMMANDS or "--help" in args:
        return args if "--help" in args else None
    extra = SMALL_BUDGET.get(command, [])
    if command == "train" and len(args) > 1 and args[1] in ON_POLICY:
        extra = ON_POLICY_BUDGET
    if "--resume" in args:  # continue the 400-step run by 200 steps
        extra = [*extra, "--total-env-steps", "600"]
    return args + extra


def _cases():
    text = README.read_text(encoding="utf-8")
    file = placeholder_file(text)
    runs = [a for a in (adapted(w, file) for w in bash_commands(text)) if a is not None]
    fast = [a for a in runs if a[0] not in SLOW]
    slow = [a for a in runs if a[0] in SLOW]
    return fast, slow


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """A copy of the repository's demos and README, with its own user folders."""
    work = tmp_path_factory.mktemp("fresh-clone")
    shutil.copytree(ROOT / "demos", work / "demos")
    shutil.copy2(README, work / "README.md")
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "XDG_DATA_HOME": str(work / ".data"),
        "XDG_CONFIG_HOME": str(work / ".config"),
        "MINARI_DATASETS_PATH": str(work / ".minari"),
        "SDL_VIDEODRIVER": "dummy",
        "MPLBACKEND": "Agg",
    }
    return work, env


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    # The copy's demos/ is the bundled sample folder of these runs (outputs refused there).
    home = env["XDG_DATA_HOME"]
    argv = [home + a[len(DATA_HOME) :] if a.startswith(DATA_HOME + "/") else a for a in argv]
    code = (
        "import pathlib, demostudio.assets as a; "
        f"a.SAMPLE_DEMOS = pathlib.Path({str(cwd / 'demos')!r}); "
        "from demostudio.cli import main; raise SystemExit(main())"
    )
    return subprocess.run(
        [sys.executable, "-c", code, *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _check(argv, done) -> None:
    print(f"demostudio {shlex.join(argv)}")
    assert done.returncode == 0, f"demostudio {shlex.join(argv)}\n{done.stdout}\n{done.stderr}"
    assert "Traceback" not in done.stderr
    assert not [line for line in done.stderr.splitlines() if line.startswith("error:")]


@pytest.mark.timeout(600)
def test_readme_commands_run_as_written(clone):
    work, env = clone
    fast, _ = _cases()
    assert len(fast) >= 15  # the README's examples, not an empty parse
    for argv in fast:
        _check(argv, run(argv, work, env))
    # What the examples promise exists.
    assert any((work / "runs").glob("r2d3-MountainCar-v0-s0/metrics.jsonl"))
    assert (work / "curves.png").stat().st_size > 0
    assert any((work / "all_good").rglob("*.h5")) and (work / "data" / "train").is_dir()
    # The user's recordings (and the piece trimmed from a sample) went to their own folder;
    # the shipped demos got none.
    recorded = work / ".data" / "demostudio" / "recordings" / "CartPole-v1"
    mine = [p for p in recorded.glob("*.h5") if "_trim" not in p.name]
    assert len(mine) == 1 and "good" in read_summary(mine[0]).tags  # tagged, not a sample
    assert len([p for p in recorded.glob("*.h5") if "_trim" in p.name]) == 1
    shipped = sorted(p.name for p in (ROOT / "demos").rglob("*.h5"))
    assert sorted(p.name for p in (work / "demos").rglob("*.h5")) == shipped


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_readme_compare_runs_as_written(clone):
    work, env = clone
    _, slow = _cases()
    assert slow
    for argv in slow:
        _check(argv, run(argv, work, env))

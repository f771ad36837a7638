"""Every `demostudio` command in the bash blocks of the README and of each docs/*.md page runs
as written, in order, the way a new user would type them from a fresh clone; the python
blocks of docs/*.md run too, as scripts.

Each page runs on its own fresh copy of the shipped demos, with its own user folders, so a
page may use only what its own earlier commands made.

What is adapted, and why:
* `~/.local/share` (the recordings folder's default parent) is the copy's `$XDG_DATA_HOME`.
* Windows: `demostudio` (the launcher), `play`, `replay` and `coach` are skipped (they need
  a person; tests/play and tests/replay drive them headless); `watch RUN` runs in its headless
  mode (`--headless --record watched`).
* Long commands get a small budget appended (a later flag overrides the page's): `train`
  `--total-env-steps 400 --eval-every 200 ...` (a resume 600), `evaluate` and `record` one
  episode, `compare` one seed and a 300-step budget; `train ppo|rnd-ppo` two envs and a
  256-step budget of short rollouts; `train bc` 40 updates; `train dqfd` 20 pre-training
  updates.
* `make ...` lines (set-up, the test suite itself, lint) are not run here, nor the indented
  (non-bash) examples that need a GPU or a Ray cluster.

Default run (about two minutes on an idle two-core machine): the README's commands but the
slow ones (`compare`, every algorithm; `--actor-procs`, which starts Ray), and the docs
pages that train nothing, whole. The docs pages that train (one per algorithm, training,
GPUs, scaling out) have their commands' flags and values checked by the CLI's own parsers
and configs; the slow tier runs them whole, in order, and the README with its slow
commands."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from demostudio.episode import find_episodes, read_summary

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))

WINDOW_COMMANDS = {"launch", "play", "replay", "coach"}
TRAIN_BUDGET = [
    "--total-env-steps", "400", "--eval-every", "200", "--eval-episodes", "1",
    "--checkpoint-every", "200",
    "--min-replay", "50", "--batch-size", "4", "--no-progress", "--no-tensorboard",
]  # fmt: skip
SMALL_BUDGET = {
    "record": ["--episodes", "1"],
    "train": TRAIN_BUDGET,
    "evaluate": ["--episodes", "1"],
    "watch": ["--episodes", "1", "--headless", "--record", "watched"],
    "compare": [
        "--seeds", "1", "--budget", "300", "--eval-every", "0", "--eval-episodes", "1",
        "--final-eval-episodes", "1", "--jobs", "1",
    ],
}  # fmt: skip
# Budgets of the algorithms whose clock or schedule is not the replay's (a later flag wins).
ALGO_BUDGET = {
    # on-policy agents have no replay: their budget is rollouts
    "ppo": [
        "--total-env-steps", "256", "--eval-every", "128", "--eval-episodes", "1",
        "--checkpoint-every", "128", "--num-envs", "2", "--rollout-length", "32",
        "--segment-length", "16", "--obs-norm-init-steps", "4", "--bc-pretrain-updates", "5",
        "--max-episode-frames", "400", "--no-progress", "--no-tensorboard",
    ],
    # behaviour cloning never steps an env to learn: its clock is updates
    "bc": [
        "--max-updates", "40", "--eval-every", "20", "--eval-episodes", "1", "--batch-size",
        "4", "--no-progress", "--no-tensorboard",
    ],
    "dqfd": [*TRAIN_BUDGET, "--pretrain-updates", "20"],
}  # fmt: skip
ALGO_BUDGET["rnd-ppo"] = ALGO_BUDGET["ppo"]
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


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def adapted(words: list[str]) -> list[str] | None:
    """The argv to run for a page's command, or None when it is not run here."""
    if words[0] != "demostudio":
        return None
    args = words[1:]
    command = args[0] if args else "launch"
    if "--help" in args:
        return args
    if command in WINDOW_COMMANDS:
        return None
    extra = SMALL_BUDGET.get(command, [])
    if command == "train" and len(args) > 1 and args[1] in ALGO_BUDGET:
        extra = ALGO_BUDGET[args[1]]
    if "--resume" in args:  # continue the 400-step run by 200 steps
        extra = [*extra, "--total-env-steps", "600"]
    return args + extra


def is_slow(argv: list[str]) -> bool:
    return argv[0] == "compare" or "--actor-procs" in argv


def trains(page: Path) -> bool:
    """The page trains an agent (its commands take minutes even at the small budgets)."""
    return any(a[0] in ("train", "compare") for a in page_commands(page))


def page_commands(page: Path) -> list[list[str]]:
    words = bash_commands(page.read_text(encoding="utf-8"))
    return [a for a in map(adapted, words) if a is not None]


def fresh_copy(root: Path) -> tuple[Path, dict[str, str]]:
    """A copy of the repository's demos, with its own user folders."""
    root.mkdir(parents=True, exist_ok=True)
    shutil.copytree(ROOT / "demos", root / "demos")
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "XDG_DATA_HOME": str(root / ".data"),
        "XDG_CONFIG_HOME": str(root / ".config"),
        "MINARI_DATASETS_PATH": str(root / ".minari"),
        "SDL_VIDEODRIVER": "dummy",
        "MPLBACKEND": "Agg",
    }
    return root, env


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    # The copy's demos/ is the bundled sample folder of these runs (outputs refused there).
    home = env["XDG_DATA_HOME"]
    argv = [home + a[len(DATA_HOME) :] if a.startswith(DATA_HOME + "/") else a for a in argv]
    code = (
        "import pathlib, demostudio.assets as a; "
        f"a.SAMPLE_DEMOS = pathlib.Path({str(cwd / 'demos')!r}); "
        "from demostudio.cli import main; raise SystemExit(main())"
    )
    return _run([sys.executable, "-c", code, *argv], cwd, env)


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def _check(what: str, done: subprocess.CompletedProcess) -> None:
    print(what)
    assert done.returncode == 0, f"{what}\n{done.stdout}\n{done.stderr}"
    assert "Traceback" not in done.stderr
    assert not [line for line in done.stderr.splitlines() if line.startswith("error:")]


def follow(page: Path, work: Path, env: dict[str, str], slow: bool) -> None:
    """Run the page's commands in order (the slow ones only when ``slow``), then its python
    blocks."""
    commands = [a for a in page_commands(page) if slow or not is_slow(a)]
    for argv in commands:
        _check(f"{page.name}: demostudio {shlex.join(argv)}", run(argv, work, env))
    for code in python_blocks(page.read_text(encoding="utf-8")):
        _check(f"{page.name}: python block", _run([sys.executable, "-c", code], work, env))


def check_flags(argv: list[str]) -> None:
    """The command's flags and values, through the parsers and configs the CLI uses (an
    unknown flag or a bad value fails here as it would for the user)."""
    from demostudio.cli import CommandError, build_parser

    try:
        args = build_parser().parse_args(argv)
    except SystemExit:
        pytest.fail(f"demostudio {shlex.join(argv)}: the CLI refuses its flags")
    if argv[0] == "train":
        from agents.registry import get_algorithm
        from demostudio.cli.dataclass_args import dataclass_from_args
        from demostudio.cli.train_cmds import algorithm_parser, parse_flags

        entry = get_algorithm(args.algo)
        parser = algorithm_parser(args.algo, entry.config_cls)
        try:
            cfg = dataclass_from_args(entry.config_cls, parse_flags(parser, args.algo, args.args))
            if "--resume" not in args.args:  # a resume takes the rest from the saved config
                cfg.validate()  # what train checks first
        except (CommandError, ValueError) as exc:
            pytest.fail(f"demostudio {shlex.join(argv)}: {exc}")


def shipped_untouched(work: Path) -> None:
    shipped = sorted(p.name for p in (ROOT / "demos").rglob("*.h5"))
    assert sorted(p.name for p in (work / "demos").rglob("*.h5")) == shipped


def recordings(work: Path, env_id: str) -> list[Path]:
    return find_episodes(work / ".data" / "demostudio" / "recordings" / env_id)


# What each page's examples promise, checked after they ran (the fast tier's outputs).
def _readme(work: Path) -> None:
    assert (work / "runs" / "r2d3-MountainCar-v0-s0" / "metrics.jsonl").is_file()
    assert find_episodes(work / "watched" / "MountainCar-v0")  # the agent's episodes
    assert (work / "runs" / "taught" / "config.json").is_file()
    assert len(recordings(work, "CartPole-v1")) == 1  # went to the recordings folder


def _recording(work: Path) -> None:
    # The user's recordings (and the piece trimmed from a sample) went to their own folder.
    mine = [p for p in recordings(work, "CartPole-v1") if "_trim" not in p.name]
    assert len(mine) == 1 and "good" in read_summary(mine[0]).tags  # tagged, not a sample
    assert len([p for p in recordings(work, "CartPole-v1") if "_trim" in p.name]) == 1
    assert (work / "my-keys.json").stat().st_size > 0


def _datasets(work: Path) -> None:
    # 5 samples and their 5 imported copies in, the 4 of -120 or better out
    assert len(find_episodes(work / "best")) == 4
    assert find_episodes(work / "data" / "train") and find_episodes(work / "data" / "validation")


def _training(work: Path) -> None:
    assert (work / "curves.png").stat().st_size > 0
    assert (work / "runs" / "gated" / "config.json").is_file()
    assert (work / "runs" / "taught" / "config.json").is_file()


def _python_api(work: Path) -> None:
    assert len(find_episodes(work / "my-recordings" / "CartPole-v1")) == 1
    assert (work / "runs" / "from-python" / "metrics.jsonl").is_file()


PROMISES: dict[str, Callable[[Path], None]] = {  # docs/ pages by name
    "recording.md": _recording,
    "datasets.md": _datasets,
    "training.md": _training,
    "python-api.md": _python_api,
}


def test_every_docs_page_is_followed_and_linked():
    names = {p.name for p in DOCS}
    assert {"README.md", "choosing.md", "episode-format.md", "python-api.md"} <= names
    index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    for page in DOCS:
        if page.name != "README.md":
            assert f"({page.name}" in index, f"docs/README.md: link {page.name}"
    assert sum(len(page_commands(p)) for p in DOCS) >= 40  # the pages' examples, parsed
    good = ["train", "r2d3", "--demos", "demos", "--demo-ratio", "0.5"]
    check_flags(good)  # the flag check passes a good command and fails a bad one
    for bad in (["--demo-ratio", "2"], ["--no-such-flag", "1"]):
        with pytest.raises(pytest.fail.Exception):
            check_flags([*good, *bad])


def heading_anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_links_between_pages_resolve():
    pages = [README, ROOT / "benchmarks" / "results" / "README.md", *DOCS]
    for page in pages:
        for link in re.findall(r"\]\(([^)\s]+)\)", page.read_text(encoding="utf-8")):
            if re.match(r"https?:", link):
                continue
            path, _, anchor = link.partition("#")
            target = page.parent / path if path else page
            assert target.exists(), f"{page.relative_to(ROOT)}: {link} does not exist"
            if anchor:
                text = target.read_text(encoding="utf-8")
                anchors = {heading_anchor(h) for h in re.findall(r"^#+ (.*)$", text, re.M)}
                assert anchor in anchors, f"{page.relative_to(ROOT)}: no heading for {link}"


@pytest.mark.timeout(600)
def test_readme_commands_run_as_written(tmp_path):
    work, env = fresh_copy(tmp_path / "clone")
    assert len(page_commands(README)) >= 5  # the README's examples, not an empty parse
    follow(README, work, env, slow=False)
    _readme(work)
    shipped_untouched(work)


LIGHT = [p for p in DOCS if not trains(p)]
TRAINING = [p for p in DOCS if trains(p)]


@pytest.mark.timeout(600)
@pytest.mark.parametrize("page", LIGHT, ids=[p.name for p in LIGHT])
def test_docs_commands_run_as_written(page, tmp_path):
    work, env = fresh_copy(tmp_path / "clone")
    follow(page, work, env, slow=True)
    PROMISES.get(page.name, lambda work: None)(work)
    shipped_untouched(work)


@pytest.mark.parametrize("page", TRAINING, ids=[p.name for p in TRAINING])
def test_training_docs_commands_have_valid_flags(page):
    commands = page_commands(page)
    assert commands
    for argv in commands:
        check_flags(argv)


@pytest.mark.slow
@pytest.mark.timeout(1200)
@pytest.mark.parametrize("page", TRAINING, ids=[p.name for p in TRAINING])
def test_training_docs_commands_run_as_written(page, tmp_path):
    work, env = fresh_copy(tmp_path / "clone")
    follow(page, work, env, slow=True)
    PROMISES.get(page.name, lambda work: None)(work)
    shipped_untouched(work)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_readme_slow_commands_run_as_written(tmp_path):
    work, env = fresh_copy(tmp_path / "clone")
    slow = [a for a in page_commands(README) if is_slow(a)]
    assert slow
    for argv in slow:
        _check(f"README.md: demostudio {shlex.join(argv)}", run(argv, work, env))

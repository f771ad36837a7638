"""What the README's commands write in the working folder (``--record watched``, ``--out
compare/``, ``--run-dir runs/x``) is ignored by git, so following the README leaves a clean
checkout."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _readme_outputs() -> list[str]:
    text = (ROOT / "README.md").read_text()
    found = re.findall(r"--(?:record|out|run-dir) ([a-z][\w./-]*)", text)
    return sorted({f.rstrip("/") for f in found if f.upper() != f})  # not placeholders (DIR)


def test_the_readmes_outputs_are_ignored():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    outputs = _readme_outputs()
    assert "watched" in outputs and "compare" in outputs
    probes = [f"{o}/MountainCar-v0/x.h5" for o in outputs]
    done = subprocess.run(["git", "check-ignore", "--no-index", *probes], cwd=ROOT,
                          capture_output=True, text=True)  # fmt: skip
    assert sorted(done.stdout.split()) == sorted(probes)

"""Verification in a child process (``python -m demostudio.replay.verify_process FILE``).

Re-simulating needs the env, and Gymnasium's classic-control envs call ``pygame.quit()``
when they close, which would take the viewer's window (and its fonts) with them. A child
process keeps that away from the window and off the UI thread's GIL. The child writes JSON
lines on stdout: progress ``{"done": d, "total": t}``, then ``{"result": ...}`` or
``{"error": ...}``; nothing is pickled."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path

from demostudio.episode import Divergence, VerifyResult

PREFIX = "@verify "
"""Marks the child's protocol lines (anything else on its output is kept for errors)."""


def _emit(message: dict) -> None:
    sys.stdout.write(PREFIX + json.dumps(message) + "\n")
    sys.stdout.flush()


def child_main(path: str) -> int:
    from demostudio.episode import verify_episode

    last = [0.0]

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] >= 0.05 or done >= total:
            last[0] = now
            _emit({"done": done, "total": total})

    try:
        r = verify_episode(path, frames=True, progress=progress)
    except Exception as exc:  # reported in the window
        _emit({"error": f"{type(exc).__name__}: {exc}"})
        return 1
    d = r.divergence
    _emit(
        {
            "result": {
                "steps_checked": r.steps_checked,
                "divergence": None
                if d is None
                else {"step": d.step, "field": d.field, "detail": d.detail},
            }
        }
    )
    return 0


class VerifyProcess:
    """Same surface as :class:`~demostudio.replay.jobs.BackgroundJob`: ``label``, ``path``,
    ``done``/``total``/``fraction``, ``finished``, ``result`` (a VerifyResult) or ``error``."""

    label = "verify"

    def __init__(self, path: Path):
        self.path = Path(path)
        self.done = 0
        self.total = 0
        self.result: VerifyResult | None = None
        self.error: BaseException | None = None
        self._other: deque[str] = deque(maxlen=5)
        self._finished = threading.Event()
        env = {
            **os.environ,
            "SDL_VIDEODRIVER": "dummy",
            "SDL_AUDIODRIVER": "dummy",
            "PYGAME_HIDE_SUPPORT_PROMPT": "1",
        }
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "demostudio.replay.verify_process", str(self.path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        self._reader = threading.Thread(target=self._read, name="viewer-verify", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        try:
            for line in self._proc.stdout:
                if not line.startswith(PREFIX):
                    if line.strip():
                        self._other.append(line.strip())
                    continue
                try:
                    message = json.loads(line[len(PREFIX) :])
                except ValueError:
                    continue
                if "done" in message:
                    self.done, self.total = int(message["done"]), int(message["total"])
                elif "error" in message:
                    self.error = RuntimeError(message["error"])
                elif "result" in message:
                    r = message["result"]
                    d = r["divergence"]
                    self.result = VerifyResult(
                        self.path, int(r["steps_checked"]), None if d is None else Divergence(**d)
                    )
            code = self._proc.wait()
            if self.result is None and self.error is None:
                detail = " / ".join(self._other) or "no output"
                self.error = RuntimeError(f"the verifier exited with status {code}: {detail}")
        finally:
            self._proc.stdout.close()
            self._finished.set()

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 0.0

    @property
    def finished(self) -> bool:
        return self._finished.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._finished.wait(timeout)

    def cancel(self) -> None:
        if not self.finished:
            self._proc.terminate()
            try:
                self._proc.wait(5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
            self._finished.wait(5)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m demostudio.replay.verify_process EPISODE_FILE")
    sys.exit(child_main(sys.argv[1]))

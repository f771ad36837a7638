"""Verification in a child process.

Re-simulating needs the env, and Gymnasium's classic-control envs call ``pygame.quit()``
when they close, which would take the viewer's window (and its fonts) with them. A spawned
child keeps that away from the window and off the UI thread's GIL. Progress comes back
through two shared integers, the result as JSON (nothing is unpickled)."""

from __future__ import annotations

import json
import multiprocessing as mp
import time
from pathlib import Path

from demostudio.episode import Divergence, VerifyResult


def _child(path: str, done, total, conn) -> None:
    from demostudio.episode import verify_episode

    def progress(d: int, t: int) -> None:
        done.value, total.value = d, t

    try:
        r = verify_episode(path, frames=True, progress=progress)
        d = r.divergence
        message = {
            "steps_checked": r.steps_checked,
            "divergence": None
            if d is None
            else {"step": d.step, "field": d.field, "detail": d.detail},
        }
    except Exception as exc:  # reported in the window
        message = {"error": f"{type(exc).__name__}: {exc}"}
    conn.send_bytes(json.dumps(message).encode("utf-8"))
    conn.close()


class VerifyProcess:
    """Same surface as :class:`~demostudio.replay.jobs.BackgroundJob`: ``label``, ``path``,
    ``done``/``total``/``fraction``, ``finished``, ``result`` (a VerifyResult) or ``error``."""

    label = "verify"

    def __init__(self, path: Path):
        self.path = Path(path)
        ctx = mp.get_context("spawn")
        self._done = ctx.Value("q", 0, lock=False)
        self._total = ctx.Value("q", 0, lock=False)
        self._recv, send = ctx.Pipe(duplex=False)
        self._proc = ctx.Process(
            target=_child, args=(str(self.path), self._done, self._total, send), daemon=True
        )
        self._proc.start()
        send.close()
        self.result: VerifyResult | None = None
        self.error: BaseException | None = None
        self._finished = False

    @property
    def done(self) -> int:
        return int(self._done.value)

    @property
    def total(self) -> int:
        return int(self._total.value)

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 0.0

    def _poll(self, timeout: float) -> None:
        if self._finished:
            return
        try:
            ready = self._recv.poll(timeout)
        except (EOFError, OSError):
            ready = False
        if ready:
            try:
                message = json.loads(self._recv.recv_bytes().decode("utf-8"))
            except (EOFError, OSError, ValueError) as exc:
                message = {"error": f"lost the verification result ({exc})"}
            if "error" in message:
                self.error = RuntimeError(message["error"])
            else:
                d = message["divergence"]
                self.result = VerifyResult(
                    self.path, message["steps_checked"], None if d is None else Divergence(**d)
                )
            self._proc.join(5)
            self._finished = True
        elif not self._proc.is_alive():
            self.error = RuntimeError(f"the verification process exited ({self._proc.exitcode})")
            self._finished = True

    @property
    def finished(self) -> bool:
        self._poll(0)
        return self._finished

    def wait(self, timeout: float | None = None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._finished:
            if deadline is not None and time.monotonic() > deadline:
                return False
            self._poll(0.05)
        return True

    def cancel(self) -> None:
        if not self._finished and self._proc.is_alive():
            self._proc.terminate()
            self._proc.join(5)
        self._recv.close()

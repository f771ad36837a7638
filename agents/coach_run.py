"""The coach's training side (``demostudio coach ALGO``): the coached config settled before
training starts, and the trainer thread that runs the run shell while the window (the app's,
in the main thread) shows the policy and takes corrections (:mod:`agents.coach`).

The command parses the flags, checks what only the app can (the key map, the sample demos),
calls :func:`settle_config`, :func:`coached_folders`, :func:`reuse_corrections` and
:func:`start_training`, builds its window around ``training.link`` and ends with
:meth:`CoachTraining.stop`.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any, NamedTuple

from agents.coach import CoachLink, coached, run_training
from agents.core.agent import Agent
from agents.core.run import TrainResult, default_run_dir, resolve_env
from agents.core.stopping import request_stop, stop_signum
from agents.dqfd.config import DQfDSettings
from demostudio.episode import find_episodes

GIL_SWITCH_SECONDS = 0.001
"""The trainer thread hands the interpreter to the window's thread at least this often:
with Python's default (5 ms) the trainer holds it long enough that the window falls behind
its real-time rate on a busy machine."""


def settle_config(cfg: Any) -> None:
    """The env (from the demos when --env is not given) and every value checked, before the
    window is built; ValueError or FileNotFoundError naming the flag."""
    resolve_env(cfg)
    cfg.validate()


def coached_folders(algo: str, cfg: Any, corrections: Path | None) -> Path:
    """The run folder (set into ``cfg``: --run-dir, else the default one) and the folder the
    corrected episodes are saved in (``corrections``, else RUN_DIR/corrections)."""
    cfg.run_dir = Path(cfg.run_dir) if cfg.run_dir else default_run_dir(algo, cfg.env, cfg.seed)
    return Path(corrections or cfg.run_dir / "corrections")


def reuse_corrections(cfg: Any, corrections: Path) -> str | None:
    """Earlier corrections in ``corrections`` are demos again (added to ``cfg.demos``); a
    run with no demos at all has nothing to pre-train on, so DQfD's pre-training is turned
    off. Returns the line that says so, or None."""
    if corrections.is_dir() and find_episodes([corrections]) and corrections not in cfg.demos:
        cfg.demos = (*cfg.demos, corrections)
    if not cfg.demos and isinstance(cfg, DQfDSettings) and cfg.pretrain_updates:
        cfg.pretrain_updates = 0
        return "coach: no demos yet, so no pre-training (--pretrain-updates 0)"
    return None


class CoachTraining(NamedTuple):
    """The trainer thread of a coaching session and the link it shares with the window."""

    link: CoachLink
    thread: threading.Thread

    def abandon(self) -> None:
        """Stop training (it saves as at any stop) and wait for the thread, raising nothing:
        the window failed to start, and its error is the one to tell."""
        self.link.stop.set()
        self.thread.join()

    def stop(self) -> TrainResult:
        """End training (final evaluation and checkpoint) and return its result; the run's
        error, raised here, when it failed."""
        self.abandon()
        if self.link.error is not None:
            raise self.link.error
        assert self.link.result is not None, "a run that did not fail has a result"
        return self.link.result


def start_training(agent_cls: type[Agent], cfg: Any) -> CoachTraining:
    """Start ``agent_cls`` training on ``cfg`` in a background thread and wait until its
    acting network is published; the run's error, raised here, when it fails first."""
    sys.setswitchinterval(min(sys.getswitchinterval(), GIL_SWITCH_SECONDS))
    link = CoachLink(agent_cls.name)
    thread = threading.Thread(target=run_training, args=(coached(agent_cls, cfg, link), link),
                              name="coach-trainer", daemon=True)  # fmt: skip
    thread.start()
    try:
        link.ready.wait()
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):  # a stop signal: the run saves, interrupted
            request_stop(stop_signum(exc))
        link.stop.set()
        thread.join()
        raise
    if link.error is not None:
        thread.join()
        raise link.error
    return CoachTraining(link, thread)


__all__ = [
    "GIL_SWITCH_SECONDS",
    "CoachTraining",
    "coached_folders",
    "reuse_corrections",
    "settle_config",
    "start_training",
]

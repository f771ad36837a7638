"""What a run says about the demos it loaded (:func:`demo_report`), printed once it starts."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from demostudio.episode import EpisodeError, EpisodeFile, read_summary
from demostudio.episode.quality import ended_early, long_idle
from demostudio.episode.trim import idle_runs


def demo_report(demos: Any, given: Sequence[str | os.PathLike]) -> list[str]:
    """What a run loaded from ``--demos`` (``given``) into ``demos`` (a
    :class:`agents.core.demos.DemoSet`; that module imports this one): a line of counts, then
    one warning per kind of doubtful file (tagged bad, ended early by the player, recovered
    after a crash, a long idle stretch as ``demostudio quality`` flags it), each with how to
    deal with it.
    The loader uses every file it is given: leaving one out is the user's choice."""
    where = " ".join(map(str, given))
    sums = demos.summaries or [read_summary(p) for p in demos.paths]
    players = sorted({s.player for s in sums if s.player})
    who = f" (players {', '.join(players)})" if players else ""
    recorded = sum(len(e) for e in demos.episodes)
    of = f" of {recorded} recorded" if recorded != demos.steps else ""
    lines = [f"demos: {len(sums)} episodes, {demos.steps} steps{of} from {where}{who}"]
    if demos.unchanged:
        lines.append(
            f"demos: {demos.unchanged} steps changed nothing (a pause, a press or a move that "
            "did nothing, or with skip-loops a round trip back to an observation) and are not "
            "learned from (--demo-unchanged-steps learn keeps them)"
        )
    kinds: dict[str, list[Path]] = {"bad": [], "early": [], "recovered": [], "idle": []}
    for s in sums:
        if "bad" in s.tags:
            kinds["bad"].append(s.path)
        if s.recovered:
            kinds["recovered"].append(s.path)
        try:
            with EpisodeFile(s.path) as ep:
                if ended_early(ep):
                    kinds["early"].append(s.path)
                if any(long_idle(n, s.length) for n in idle_runs(ep)):
                    kinds["idle"].append(s.path)
        except (EpisodeError, OSError, ValueError):
            continue  # it loaded a moment ago; the report is advice, never a failure
    leave_out = (
        f"`demostudio tag FILE --add bad`, then `demostudio merge {where} --exclude-tag bad "
        "--out KEPT` and --demos KEPT leaves them out"
    )
    said = {
        "bad": f"tagged bad, still used (`demostudio merge {where} --exclude-tag bad --out "
        "KEPT` and --demos KEPT leaves them out)",
        "early": f"ended early by their player, not by the env ({leave_out})",
        "recovered": f"recovered after a crash (check them with `demostudio verify`; {leave_out})",
        "idle": f"with a long idle stretch (`demostudio quality {where}` gives the command that "
        "trims each)",
    }
    for kind, paths in kinds.items():
        if paths:
            first = ", ".join(p.name for p in paths[:3]) + (", ..." if len(paths) > 3 else "")
            lines.append(f"warning: {len(paths)} demo episode(s) {said[kind]}: {first}")
    return lines

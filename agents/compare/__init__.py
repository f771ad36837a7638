"""Compare learning-from-demonstration algorithms on one env: the same demo folder, the
same env-step budget, several seeds each; a markdown table (final evaluation return, env
steps to a threshold, wall time, and the agent against the person: the share of the demos'
return reached and the human-normalised score (agent - random) / (demos - random), the
random policy measured in the same comparison) and one PNG of the learning curves with the
demos' returns.

Every finished run is appended to ``OUT/results.jsonl`` at once, so an interrupted
comparison (Ctrl-C, SIGTERM, SIGHUP: the run under way saves its state marked interrupted)
keeps what it finished and a rerun with the same ``OUT`` skips those runs.

The modules: ``records`` (the settings, a run's spec and summary, ``results.jsonl``),
``reference`` (the demos' return, the random policy, the default threshold), ``plan`` (the
runs and their configs, the run folders continued or cleared), ``running`` (training and
evaluating every run), ``table`` and ``plot`` (the results written out).
"""

from __future__ import annotations

from agents.compare.plan import (
    build_config,
    check_run_folder,
    continue_or_clear,
    parse_overrides,
    plan_runs,
)
from agents.compare.plot import plot_comparison
from agents.compare.records import (
    FINAL_EVAL_SEED,
    RUN_MARKER,
    CompareSettings,
    DemoInfo,
    Reference,
    RunSpec,
    RunSummary,
    read_results,
)
from agents.compare.reference import RandomPolicy, demo_info, random_return
from agents.compare.running import run_comparison, run_one, time_left
from agents.compare.table import markdown_table

__all__ = [
    "FINAL_EVAL_SEED",
    "RUN_MARKER",
    "CompareSettings",
    "DemoInfo",
    "RandomPolicy",
    "Reference",
    "RunSpec",
    "RunSummary",
    "build_config",
    "check_run_folder",
    "continue_or_clear",
    "demo_info",
    "markdown_table",
    "parse_overrides",
    "plan_runs",
    "plot_comparison",
    "random_return",
    "read_results",
    "run_comparison",
    "run_one",
    "time_left",
]

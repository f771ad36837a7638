"""Dataset interop: Minari export and import, and new folders from old ones (merge, split,
filters). Minari is optional: it is imported only when a Minari function runs."""

from .folders import EpisodeFilter, MergeResult, Selection, SplitResult, merge, select, split
from .minari import export_minari, import_minari

__all__ = [
    "EpisodeFilter",
    "MergeResult",
    "Selection",
    "SplitResult",
    "export_minari",
    "import_minari",
    "merge",
    "select",
    "split",
]

"""The config of a coached run (:func:`coach_config_cls`), without torch: ``demostudio coach
ALGO --help`` and a mistyped flag build their parser from it alone."""

from __future__ import annotations

from agents.core.config import DemoReplayConfig


def coach_config_cls(cls: type) -> type:
    """``cls`` for coaching: ``--demos`` optional (the corrections fill the demo replay)."""
    if not issubclass(cls, DemoReplayConfig):
        raise TypeError(f"expected a config with a demo replay, got {cls.__name__}")
    return type(cls.__name__, (cls,), {"demos_required": False, "__doc__": cls.__doc__})


__all__ = ["coach_config_cls"]

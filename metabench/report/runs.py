"""Moved to :mod:`metabench.runs.stored` (issue 37): the old names still resolve here, with a
``PluginAPIDeprecationWarning``, for plugins that read runs through them (docs/plugins.md, change log)."""

from __future__ import annotations

import warnings

from ..errors import PluginAPIDeprecationWarning
from ..runs import stored

_MOVED = ("Run", "load_run", "find_runs", "one_per_task_and_model", "by_task")


def __getattr__(name: str):
    if name in _MOVED:
        warnings.warn(f"metabench.report.runs.{name} moved to metabench.runs.stored.{name}",
                      PluginAPIDeprecationWarning, stacklevel=2)
        return getattr(stored, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

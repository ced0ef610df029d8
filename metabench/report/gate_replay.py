"""Moved to :mod:`metabench.report.gate.replay` (issue 47 item 5): the old names still resolve here, with a
``DeprecationWarning``, until metabench 0.2."""

from __future__ import annotations

import warnings

from .gate import replay as _moved


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    warnings.warn(f"metabench.report.gate_replay.{name} moved to metabench.report.gate.replay.{name}",
                  DeprecationWarning, stacklevel=2)
    return getattr(_moved, name)

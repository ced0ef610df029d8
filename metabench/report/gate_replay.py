"""Moved to :mod:`metabench.report.gate.replay` (issue 47 item 5): the old names still resolve here, with a
``DeprecationWarning``, until metabench 0.2."""

from . import moved_names
from .gate import replay

__getattr__ = moved_names(__name__, replay)

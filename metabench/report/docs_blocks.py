"""Moved to :mod:`metabench.report.docs.blocks` (issue 47 item 5): the old names still resolve here, with a
``PluginAPIDeprecationWarning``, for plugins whose docs blocks use them (docs/plugins.md, change log), until
metabench 0.2."""

from ..errors import PluginAPIDeprecationWarning
from . import moved_names
from .docs import blocks

__getattr__ = moved_names(__name__, blocks, PluginAPIDeprecationWarning)

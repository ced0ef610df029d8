"""metabench: a plugin-based benchmark suite for metaphor processing in language models.

Plugins decorate their hook functions with ``metabench.hookimpl`` (see ``metabench.hookspecs``). Scripts call
``metabench.evaluate`` and ``metabench.compare`` (docs/python-api.md), which are loaded on first use, so
``import metabench`` stays as light as the hook markers.
"""

from .hookspecs import hookimpl
from .version import __version__

#: The Python API (metabench/api.py), imported when first asked for.
_API = ("evaluate", "compare", "Evaluation", "TaskResult", "MetricValue", "ComparisonReport")

__all__ = ["__version__", "hookimpl", *_API]


def __getattr__(name: str):
    if name in _API:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'metabench' has no attribute {name!r}")

"""metabench: a plugin-based benchmark suite for metaphor processing in language models.

Plugins decorate their hook functions with ``metabench.hookimpl`` (see ``metabench.hookspecs``).
"""

__version__ = "0.1.0"

from .hookspecs import hookimpl  # noqa: E402 - after __version__, which hookspecs' users read

__all__ = ["__version__", "hookimpl"]

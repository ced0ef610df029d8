"""An analysis a plugin adds to ``metabench compare``: ``metabench compare NAME RUN... [options]``.

The paper families' analyses (the hard family's ``hardness``, the artifacts family's ``artifacts``) used to be
written into ``commands/compare.py``, so a tree without ``metabench/hard/`` broke ``compare`` (issue 47). A family
now registers an :class:`Analysis` through ``metabench_register_compare_analyses``, and ``compare`` builds its
verb from it as it builds its own; core names no family.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

CATEGORY = "compare_analysis"


@dataclass(frozen=True)
class Analysis:
    """One registered analysis (``register(name, "package.module:ANALYSIS", description=ONE_LINE)``).

    ``description`` and ``examples`` make the verb's ``--help`` (examples: lines ``  metabench compare NAME ...``).
    ``arguments(parser)`` adds the verb's own options; ``compare`` adds ``RUN...`` before them and ``--json`` after.
    ``run(args, runs, registry) -> int`` is the verb: the parsed options, the run folders found under ``RUN...``
    (``metabench.runs.stored.Run``) and the registry; it prints and returns the exit status (raise
    ``metabench.errors.MetabenchError`` for a user's mistake).

    ``old_flags(group)`` and ``old_dests`` keep an analysis that was once a flag of ``compare`` itself (``compare
    --phi-table FILE RUN...``) working: the flags are added to compare's deprecated group, any of ``old_dests`` set
    runs ``run`` on compare's own options (``--json``, the test options, the old flags: ``run`` reads nothing else
    there) after a notice naming the verb. ``alone`` (message, hint): those flags take no other comparison option
    (an error saying so), and they win over the other old flags.
    """

    description: str
    examples: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, list, Any], int]
    old_flags: Callable[[Any], None] | None = None
    old_dests: tuple[str, ...] = ()
    alone: tuple[str, str] | None = None


def registered(registry, taken) -> dict[str, tuple[str, Analysis]]:
    """Name -> (one-line help, analysis) of every analysis the plugins registered, in the registry's order. One
    that does not resolve, or takes a name of ``taken`` (compare's own verbs), is left out with a warning naming its
    plugin (an error under ``--strict``), like a plugin's verbs: the rest of compare still works."""
    from ..errors import PluginError  # noqa: PLC0415
    from ..plugins import strict_mode  # noqa: PLC0415
    from ..registry import Problem  # noqa: PLC0415

    out = {}
    for entry in registry.entries(CATEGORY):
        try:
            if entry.name in taken:
                raise PluginError(f"compare analysis '{entry.name}' takes a name compare has ({', '.join(taken)})",
                                  hint="register it under another name")
            out[entry.name] = (entry.description, registry.resolve(CATEGORY, entry.name))
        except PluginError as exc:
            if strict_mode():
                raise
            registry.quarantine(Problem(entry.plugin, f"compare analysis '{entry.name}' ({entry.target})", exc.message,
                                        f"{exc.hint or 'fix the analysis'}; its verb is left out of compare"))
    return out

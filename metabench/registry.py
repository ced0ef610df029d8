"""What the plugins registered, with provenance, resolved lazily.

The registry is filled only through the hooks' ``register`` callbacks (see ``plugins.py``). Each entry
remembers which plugin (and version) registered it, which goes into results files, and holds either a
lazy ``"module:attr"`` target or a ready object. Nothing is imported until ``resolve`` is called.
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import PluginError, unknown

CATEGORIES = ("task_dir", "dataset", "model", "pretrained", "kind", "metric", "test", "reporter", "command",
              "paper_view", "board_section", "docs_block", "compare_analysis")
#: What a registration of a category must resolve to: a subclass of a base class (``module:Class``) or a
#: callable. Checked when a registration is first resolved, so a plugin's mistake is named with the plugin.
BASES = {"model": "metabench.models.base:Adapter", "kind": "metabench.kinds.base:Kind",
         "dataset": "metabench.data.spec:DatasetSpec", "paper_view": "metabench.config.paper_layouts:PaperTable",
         "compare_analysis": "metabench.commands.analyses:Analysis"}
#: Categories registered as ready objects (instances of their base), not classes.
INSTANCES = ("dataset", "paper_view", "compare_analysis")
CALLABLE = ("pretrained", "metric", "test", "reporter", "command", "board_section", "docs_block")


@dataclass(frozen=True)
class Entry:
    """One registration: a name, what it points at, and who registered it."""

    category: str
    name: str
    target: Any
    plugin: str
    plugin_version: str
    description: str = ""
    meta: dict = field(default_factory=dict)

    def load(self) -> Any:
        """Import a lazy ``module:attr`` target (once); return ready objects unchanged."""
        if not isinstance(self.target, str):
            return self.target
        module_name, _, attr = self.target.partition(":")
        try:
            obj = importlib.import_module(module_name)
            for part in attr.split(".") if attr else ():
                obj = getattr(obj, part)
        except (ImportError, AttributeError) as exc:
            raise PluginError(
                f"{self.category} '{self.name}' (from plugin '{self.plugin}') points at '{self.target}', "
                f"which cannot be imported: {exc}",
                hint=f"reinstall or upgrade the plugin '{self.plugin}', or disable it with "
                f"METABENCH_DISABLE_PLUGINS={self.plugin}",
            ) from exc
        return obj


@dataclass(frozen=True)
class Problem:
    """Why a plugin, or one task file of it, was quarantined: shown by `metabench plugins` and `validate`."""

    plugin: str
    where: str  # file:line
    message: str
    fix: str

    def __str__(self) -> str:
        return f"plugin '{self.plugin}': {self.where}: {self.message}; fix: {self.fix}"


class Registry:
    """Registered things by category and name, and the problems of what could not be registered."""

    def __init__(self, *, strict: bool = False) -> None:
        self._entries: dict[str, dict[str, Entry]] = {c: {} for c in CATEGORIES}
        self.plugins: list[dict] = []  # name, version, hooks, status: filled by plugins.load()
        #: In strict mode a problem is an error (CI); otherwise the broken part is dropped with a warning.
        self.strict = strict
        self.problems: list[Problem] = []

    def quarantine(self, problem: Problem, error: type[PluginError] = PluginError) -> None:
        """Record a problem and warn once, or raise it in strict mode."""
        if self.strict:
            raise error(f"{problem.where}: {problem.message} (plugin '{problem.plugin}')",
                        hint=f"{problem.fix}; strict mode (--strict / METABENCH_STRICT=1) makes this an error")
        if problem not in self.problems:
            self.problems.append(problem)
            print(f"metabench: warning: quarantined {problem}", file=sys.stderr)

    def drop(self, plugin: str) -> None:
        """Forget everything a plugin registered (it is quarantined)."""
        for bucket in self._entries.values():
            for name in [n for n, e in bucket.items() if e.plugin == plugin]:
                del bucket[name]

    def add(self, entry: Entry) -> None:
        bucket = self._entries[entry.category]
        previous = bucket.get(entry.name)
        if previous is not None and previous.target != entry.target:
            raise PluginError(
                f"{entry.category} '{entry.name}' is registered twice: by plugin '{previous.plugin}' and by "
                f"plugin '{entry.plugin}'",
                hint="rename one of them, or disable one plugin with METABENCH_DISABLE_PLUGINS=<name>",
            )
        bucket[entry.name] = entry

    def replace(self, entry: Entry) -> None:
        """Put an entry in place of the one of the same name (a task's `datasets` source whose files changed)."""
        self._entries[entry.category][entry.name] = entry

    def names(self, category: str) -> list[str]:
        return sorted(self._entries[category])

    def entries(self, category: str) -> list[Entry]:
        return [self._entries[category][n] for n in self.names(category)]

    def get(self, category: str, name: str, *, where: str = "") -> Entry:
        try:
            return self._entries[category][name]
        except KeyError:
            raise unknown(_LABEL[category], name, self._entries[category], where=where) from None

    def has(self, category: str, name: str) -> bool:
        return name in self._entries[category]

    def resolve(self, category: str, name: str, *, where: str = "") -> Any:
        entry = self.get(category, name, where=where)
        return _checked(entry, entry.load())

    def task_dirs(self) -> list[tuple[Path, Entry]]:
        return [(Path(e.target), e) for e in self._entries["task_dir"].values()]


def _checked(entry: Entry, obj: Any) -> Any:
    """``obj`` if it is what ``entry``'s category holds (see ``BASES``, ``CALLABLE``), else a PluginError."""
    base_target = BASES.get(entry.category)
    if base_target is not None:
        module_name, _, attr = base_target.partition(":")
        base = getattr(importlib.import_module(module_name), attr)
        ok = isinstance(obj, base) if entry.category in INSTANCES else isinstance(obj, type) and issubclass(obj, base)
        need = f"{'an instance' if entry.category in INSTANCES else 'a subclass'} of {module_name}.{attr}"
    elif entry.category in CALLABLE:
        ok, need = callable(obj), "callable"
    else:
        return obj
    if not ok:
        raise PluginError(
            f"{entry.category} '{entry.name}' (from plugin '{entry.plugin}') is {_describe(obj)}, which is not {need}",
            hint=f"fix the registration in plugin '{entry.plugin}' (its target is {entry.target!r})",
        )
    return obj


def _describe(obj: Any) -> str:
    if isinstance(obj, type):
        return f"the class {obj.__module__}.{obj.__qualname__}"
    return f"a {type(obj).__name__} ({str(obj)[:60]})"


_LABEL = {
    "task_dir": "task folder",
    "dataset": "dataset",
    "model": "model",
    "pretrained": "pretrained model",
    "kind": "kind",
    "metric": "metric",
    "test": "test",
    "reporter": "reporter",
    "command": "command",
    "paper_view": "paper view",
    "board_section": "leaderboard section",
    "docs_block": "generated docs table",
    "compare_analysis": "compare analysis",
}

"""Loading plugins: the built-ins and the ``metabench`` entry-point group, through one path.

Built-in plugins are ordinary modules listed in ``BUILTIN_PLUGINS``; third-party ones are found through the
``metabench`` entry-point group. Both are registered on the same ``pluggy.PluginManager`` and both are
subject to the environment switches:

- ``METABENCH_LOAD_PLUGINS=a,b``: an allow-list of third-party plugins (entry-point names). Empty string:
  load none. Unset: load all.
- ``METABENCH_DISABLE_PLUGINS=a,b``: never load these (built-in names such as ``metabench.models.plugin`` too).
- ``METABENCH_PLUGIN_MODULES=pkg.mod,...``: also load these importable modules as plugins, without packaging
  them (for plugin development and tests, like ``pytest -p``).

Each hook implementation is called separately, so a plugin that raises is named in the report and the
others still load; a misspelt hook name fails with the plugin's name and the closest valid hook.
"""

from __future__ import annotations

import importlib
import os
import sys
from functools import lru_cache
from importlib import metadata
from pathlib import Path

import pluggy

from . import __version__, hookspecs
from .errors import PluginError, did_you_mean
from .registry import Entry, Registry

BUILTIN_PLUGINS = (
    "metabench.tasks_plugin",
    "metabench.kinds.plugin",
    "metabench.models.plugin",
    "metabench.metrics.plugin",
    "metabench.data.plugin",
    "metabench.stats.plugin",
    "metabench.report.plugin",
    "metabench.hard.plugin",
)

_HOOK_CATEGORY = {
    "metabench_register_tasks": "task_dir",
    "metabench_register_datasets": "dataset",
    "metabench_register_models": "model",
    "metabench_register_pretrained": "pretrained",
    "metabench_register_kinds": "kind",
    "metabench_register_metrics": "metric",
    "metabench_register_tests": "test",
    "metabench_register_reporters": "reporter",
}


def _env_list(name: str) -> set[str] | None:
    raw = os.environ.get(name)
    if raw is None:
        return None
    return {part.strip() for part in raw.split(",") if part.strip()}


def _new_manager() -> pluggy.PluginManager:
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    return pm


def _check_hooks(plugin: object, name: str) -> None:
    """Fail on a function that looks like a hook but names none, before pluggy's vaguer error."""
    valid = list(_HOOK_CATEGORY)
    for attr in dir(plugin):
        if attr.startswith("metabench_") and attr not in valid:
            raise PluginError(
                f"plugin '{name}' defines '{attr}', which is not a metabench hook{did_you_mean(attr, valid)}",
                hint=f"rename it (valid hooks: {', '.join(valid)}), or disable the plugin with "
                f"METABENCH_DISABLE_PLUGINS={name}",
            )


def _distribution_version(ep: metadata.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return dist.version if dist is not None else "unknown"


def _collect_plugins(disabled: set[str]) -> list[tuple[str, str, object | None, str | None]]:
    """(name, version, module-or-None, error-or-None) for every plugin that should load."""
    found: list[tuple[str, str, object | None, str | None]] = []
    for module_name in BUILTIN_PLUGINS:
        if module_name in disabled:
            continue
        found.append((module_name, __version__, importlib.import_module(module_name), None))
    for module_name in sorted(_env_list("METABENCH_PLUGIN_MODULES") or ()):
        if module_name in disabled:
            continue
        try:
            found.append((module_name, "unknown", importlib.import_module(module_name), None))
        except Exception as exc:  # noqa: BLE001 - reported like a broken entry point
            found.append((module_name, "unknown", None, f"import failed: {type(exc).__name__}: {exc}"))
    allowed = _env_list("METABENCH_LOAD_PLUGINS")
    for ep in sorted(metadata.entry_points(group=hookspecs.PROJECT), key=lambda e: e.name):
        if ep.name in disabled or (allowed is not None and ep.name not in allowed):
            continue
        version = _distribution_version(ep)
        try:
            found.append((ep.name, version, ep.load(), None))
        except Exception as exc:  # noqa: BLE001 - any failure of third-party code is reported, not fatal
            found.append((ep.name, version, None, f"import failed: {type(exc).__name__}: {exc}"))
    return found


def load(extra_plugins: tuple[object, ...] = ()) -> Registry:
    """Load every enabled plugin into a fresh registry.

    ``extra_plugins`` are modules or objects registered after the others (used by tests and by programs
    that embed metabench). A plugin that fails to import or whose hook raises is recorded with its error
    and skipped; a misspelt hook is an error, since a silently ignored hook would drop its registrations.
    """
    registry = Registry()
    pm = _new_manager()
    disabled = _env_list("METABENCH_DISABLE_PLUGINS") or set()
    plugins = _collect_plugins(disabled)
    for obj in extra_plugins:
        name = getattr(obj, "__name__", type(obj).__name__)
        plugins.append((name, getattr(obj, "__version__", "unknown"), obj, None))

    for name, version, module, error in plugins:
        record = {"name": name, "version": version, "hooks": [], "status": "ok"}
        registry.plugins.append(record)
        if error is not None:
            record["status"] = error
            _warn(f"plugin '{name}' was not loaded ({error}); disable it with METABENCH_DISABLE_PLUGINS={name}")
            continue
        _check_hooks(module, name)
        pm.register(module, name=name)
        record["hooks"] = sorted(h.name for h in pm.get_hookcallers(module) or ())
    pm.check_pending()

    for hook_name, category in _HOOK_CATEGORY.items():
        for impl in getattr(pm.hook, hook_name).get_hookimpls():
            record = next(r for r in registry.plugins if r["name"] == impl.plugin_name)
            if record["status"] != "ok":
                continue
            register = _make_register(registry, category, record)
            try:
                impl.function(**{arg: register for arg in impl.argnames})
            except PluginError:
                raise
            except Exception as exc:  # noqa: BLE001 - report which plugin broke, keep the others
                record["status"] = f"{hook_name} raised {type(exc).__name__}: {exc}"
                _warn(
                    f"plugin '{record['name']}' failed in {hook_name}: {type(exc).__name__}: {exc}; "
                    f"its registrations from that hook are skipped. Upgrade or fix the plugin, or disable it "
                    f"with METABENCH_DISABLE_PLUGINS={record['name']}"
                )
    return registry


def _make_register(registry: Registry, category: str, record: dict):
    """The ``register`` callback handed to one plugin's hook."""

    def register(name_or_obj, target=None, *, description: str = "", **meta):
        if category == "task_dir":
            path = Path(name_or_obj).resolve()
            if not path.is_dir():
                raise PluginError(
                    f"plugin '{record['name']}' registered task folder '{path}', which does not exist",
                    hint="register an absolute folder path, e.g. Path(__file__).parent / 'tasks'",
                )
            registry.add(Entry(category, str(path), str(path), record["name"], record["version"]))
            return
        if category == "dataset":
            spec = name_or_obj
            registry.add(Entry(category, spec.name, spec, record["name"], record["version"], spec.description))
            return
        if not isinstance(name_or_obj, str) or target is None:
            raise PluginError(
                f"plugin '{record['name']}' called register({name_or_obj!r}, {target!r}) for a {category}",
                hint='call register("name", "package.module:attribute", description="...")',
            )
        registry.add(Entry(category, name_or_obj, target, record["name"], record["version"], description, meta))

    return register


def _warn(message: str) -> None:
    print(f"metabench: warning: {message}", file=sys.stderr)


@lru_cache(maxsize=1)
def default_registry() -> Registry:
    """The registry for this process (plugins load once)."""
    return load()

"""Loading plugins: the built-ins and the ``metabench`` entry-point group, through one path.

Built-in plugins are ordinary modules listed in ``BUILTIN_PLUGINS``; third-party ones are found through the
``metabench`` entry-point group. Both are registered on the same ``pluggy.PluginManager`` and both are
subject to the environment switches:

- ``METABENCH_LOAD_PLUGINS=a,b``: an allow-list of third-party plugins (entry-point names). Empty string:
  load none. Unset: load all.
- ``METABENCH_DISABLE_PLUGINS=a,b``: never load these (built-in names such as ``metabench.models.plugin`` too).
- ``METABENCH_PLUGIN_MODULES=pkg.mod,...``: also load these importable modules as plugins, without packaging
  them (for plugin development and tests, like ``pytest -p``).

One broken plugin must not take the tool down, least of all ``metabench plugins``, the command meant to
diagnose it; a built-in one no more than a third party's (a paper family deleted from the tree). A plugin
that fails to import, defines a misspelt hook, raises in a hook or registers a name another plugin already
holds is *quarantined*: everything it registered is dropped, one warning names the plugin, the file:line and
the fix (``METABENCH_DISABLE_PLUGINS=…``), and everything else works. A broken task file is quarantined
alone (``config/index.py``). Strict mode (``--strict`` / ``METABENCH_STRICT=1``) turns every such warning into
an error, for CI.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from functools import lru_cache
from importlib import metadata
from pathlib import Path

import pluggy

from . import hookspecs
from .version import __version__
from .errors import PluginError, did_you_mean
from .registry import Entry, Problem, Registry

BUILTIN_PLUGINS = (
    "metabench.tasks_plugin",
    "metabench.kinds.plugin",
    "metabench.models.plugin",
    "metabench.metrics.plugin",
    "metabench.data.plugin",
    "metabench.stats.plugin",
    "metabench.report.plugin",
)
#: plugins that were built in and ship as distributions now (plugins/ in the repository), by the name runs made
#: before recorded -> their entry point's name: METABENCH_DISABLE_PLUGINS and METABENCH_LOAD_PLUGINS take either
RENAMED = {"metabench.hard.plugin": "hard", "metabench.artifacts.plugin": "artifacts"}

_HOOK_CATEGORY = {
    "metabench_register_tasks": "task_dir",
    "metabench_register_datasets": "dataset",
    "metabench_register_models": "model",
    "metabench_register_pretrained": "pretrained",
    "metabench_register_kinds": "kind",
    "metabench_register_metrics": "metric",
    "metabench_register_tests": "test",
    "metabench_register_reporters": "reporter",
    "metabench_register_commands": "command",
    "metabench_register_paper_views": "paper_view",
    "metabench_register_board_sections": "board_section",
    "metabench_register_docs_blocks": "docs_block",
    "metabench_register_compare_analyses": "compare_analysis",
}


def _env_list(name: str) -> set[str] | None:
    raw = os.environ.get(name)
    if raw is None:
        return None
    return {RENAMED.get(part.strip(), part.strip()) for part in raw.split(",") if part.strip()}


def _new_manager() -> pluggy.PluginManager:
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    return pm


def strict_mode() -> bool:
    """METABENCH_STRICT=1 (or ``--strict``, which sets it): plugin and task-file problems are errors."""
    return os.environ.get("METABENCH_STRICT", "").strip().lower() not in ("", "0", "false", "no")


def _misspelt_hook(plugin: object, name: str) -> Problem | None:
    """A function that looks like a hook but names none: pluggy would ignore it and drop its registrations."""
    valid = list(_HOOK_CATEGORY)
    for attr in dir(plugin):
        if attr.startswith("metabench_") and attr not in valid:
            return Problem(
                name, _source_of(getattr(plugin, attr), plugin),
                f"'{attr}' is not a metabench hook{did_you_mean(attr, valid)}",
                f"rename it (valid hooks: {', '.join(valid)}), or disable the plugin with METABENCH_DISABLE_PLUGINS={name}",
            )
    return None


def _source_of(obj: object, fallback: object = None) -> str:
    """'file:line' where a function (or else the plugin module) is defined, for messages."""
    for candidate in (obj, fallback):
        try:
            target = inspect.unwrap(candidate)
            return f"{inspect.getsourcefile(target)}:{inspect.getsourcelines(target)[1]}"
        except (TypeError, OSError):
            continue
    return getattr(fallback, "__name__", "?")


def _distribution_version(ep: metadata.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return dist.version if dist is not None else "unknown"


def _collect_plugins(disabled: set[str]) -> list[tuple[str, str, object | None, tuple[str, str] | None]]:
    """(name, version, module-or-None, (error, fix)-or-None) for every plugin that should load."""
    found: list[tuple[str, str, object | None, tuple[str, str] | None]] = []
    for module_name in BUILTIN_PLUGINS:
        if module_name not in disabled:
            found.append(_import_module(module_name, __version__, _builtin_absent))
    for module_name in sorted(_env_list("METABENCH_PLUGIN_MODULES") or ()):
        if module_name not in disabled:
            found.append(_import_module(module_name, "unknown", _listed_absent))
    allowed = _env_list("METABENCH_LOAD_PLUGINS")
    for ep in sorted(metadata.entry_points(group=hookspecs.PROJECT), key=lambda e: e.name):
        if ep.name in disabled or (allowed is not None and ep.name not in allowed):
            continue
        version = _distribution_version(ep)
        try:
            found.append((ep.name, version, ep.load(), None))
        except Exception as exc:  # noqa: BLE001 - any failure of third-party code is reported, not fatal
            found.append((ep.name, version, None, _import_failed(ep.name, exc)))
    return found


def _import_module(module_name: str, version: str, absent) -> tuple[str, str, object | None, tuple[str, str] | None]:
    """A plugin module imported, or the (error, fix) that quarantines it. A built-in is imported this way too:
    a tree without one (a built-in module deleted) must still run every other
    command, ``--help`` included (issue 47). ``absent(module_name)`` words the case of the module itself missing,
    as opposed to a module it imports."""
    try:
        return module_name, version, importlib.import_module(module_name), None
    except ModuleNotFoundError as exc:
        if exc.name and (module_name + ".").startswith(exc.name + "."):  # itself (or its package), not its imports
            return module_name, version, None, absent(module_name)
        return module_name, version, None, _import_failed(module_name, exc)
    except Exception as exc:  # noqa: BLE001 - reported like a broken entry point
        return module_name, version, None, _import_failed(module_name, exc)


def _listed_absent(module_name: str) -> tuple[str, str]:
    return (f"METABENCH_PLUGIN_MODULES names '{module_name}', which is not importable",
            "make it importable: install its package, or add the folder holding it to PYTHONPATH "
            "(PYTHONPATH=/path/to/src); or remove it from METABENCH_PLUGIN_MODULES")


def _builtin_absent(module_name: str) -> tuple[str, str]:
    folder = "metabench/" + "/".join(module_name.split(".")[1:-1])
    return (f"this built-in plugin is missing from the installation (no {folder}/)",
            f"reinstall metabench to get it back, or {_disable(module_name)} to drop it knowingly")


def _warn_unknown_switches(disabled: set[str]) -> None:
    """A misspelt name in METABENCH_DISABLE_PLUGINS or METABENCH_LOAD_PLUGINS has no effect: say so, once."""
    known = {*BUILTIN_PLUGINS, *(_env_list("METABENCH_PLUGIN_MODULES") or ()),
             *(ep.name for ep in metadata.entry_points(group=hookspecs.PROJECT))}
    for variable, names in (("METABENCH_DISABLE_PLUGINS", disabled),
                            ("METABENCH_LOAD_PLUGINS", _env_list("METABENCH_LOAD_PLUGINS") or set())):
        for name in sorted(names - known):
            print(f"metabench: warning: {variable} names '{name}', which is no plugin{did_you_mean(name, known)}, "
                  "so it has no effect; `metabench plugins` lists the plugins' names", file=sys.stderr)


def _import_failed(name: str, exc: Exception) -> tuple[str, str]:
    return f"import failed: {type(exc).__name__}: {exc}", _disable(name)


def _first_of_each(plugins: list[tuple]) -> list[tuple]:
    """Each plugin once. One module can be found twice (installed, and named in METABENCH_PLUGIN_MODULES as
    the docs' development path suggests; or through a stale ``*.egg-info`` beside the installed package), and
    pluggy refuses a second registration of a module or a name: the first is kept, one warning names the other."""
    kept, names, modules = [], set(), {}
    for plugin in plugins:
        name, _, module, _ = plugin
        first = modules.get(id(module)) if module is not None else None
        if name in names or first is not None:
            print(f"metabench: warning: plugin '{name}' is found twice (also as '{first or name}'); it is loaded once. "
                  "hint: uninstall one copy, remove a stale *.egg-info, or drop it from METABENCH_PLUGIN_MODULES",
                  file=sys.stderr)
            continue
        names.add(name)
        if module is not None:
            modules[id(module)] = name
        kept.append(plugin)
    return kept


def load(extra_plugins: tuple[object, ...] = (), *, strict: bool | None = None) -> Registry:
    """Load every enabled plugin into a fresh registry.

    ``extra_plugins`` are modules or objects registered after the others (used by tests and by programs
    that embed metabench). A broken plugin is quarantined (see the module docstring); ``strict`` (default:
    ``METABENCH_STRICT``) raises instead.
    """
    registry = Registry(strict=strict_mode() if strict is None else strict)
    pm = _new_manager()
    disabled = _env_list("METABENCH_DISABLE_PLUGINS") or set()
    _warn_unknown_switches(disabled)
    plugins = _collect_plugins(disabled)
    for obj in extra_plugins:
        name = getattr(obj, "__name__", type(obj).__name__)
        plugins.append((name, getattr(obj, "__version__", "unknown"), obj, None))
    plugins = _first_of_each(plugins)

    for name, version, module, error in plugins:
        record = {"name": name, "version": version, "hooks": [], "status": "ok"}
        registry.plugins.append(record)
        problem = (Problem(name, _source_of(module) if module else name, *error) if error
                   else _misspelt_hook(module, name))
        if problem is not None:
            _quarantine(registry, record, problem)
            continue
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
            except PluginError as exc:
                _quarantine(registry, record, Problem(record["name"], _source_of(impl.function), exc.message,
                                                      exc.hint or _disable(record["name"])))
            except Exception as exc:  # noqa: BLE001 - a plugin's bug quarantines that plugin, not the tool
                _quarantine(registry, record, Problem(
                    record["name"], _source_of(impl.function), f"{hook_name} raised {type(exc).__name__}: {exc}",
                    f"upgrade or fix the plugin, or {_disable(record['name'])}"))
    return registry


def _disable(name: str) -> str:
    return f"disable it with METABENCH_DISABLE_PLUGINS={name}"


def _quarantine(registry: Registry, record: dict, problem: Problem) -> None:
    registry.quarantine(problem)
    record["status"] = f"quarantined: {problem.message}"
    registry.drop(record["name"])


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
        if category == "paper_view":
            view = name_or_obj
            registry.add(Entry(category, getattr(view, "key", repr(view)), view, record["name"], record["version"],
                               getattr(view, "title", "")))
            return
        if not isinstance(name_or_obj, str) or target is None:
            raise PluginError(
                f"plugin '{record['name']}' called register({name_or_obj!r}, {target!r}) for a {category}",
                hint='call register("name", "package.module:attribute", description="...")',
            )
        registry.add(Entry(category, name_or_obj, target, record["name"], record["version"], description, meta))

    return register


def default_registry() -> Registry:
    """The registry for this process (plugins load once per strictness)."""
    return _default_registry(strict_mode())


@lru_cache(maxsize=2)
def _default_registry(strict: bool) -> Registry:
    return load(strict=strict)


default_registry.cache_clear = _default_registry.cache_clear  # the lru_cache API callers (tests) already use

"""Finding tasks and groups in the registered folders, and expanding a --tasks selection.

A selection is a comma-separated list of task names, shell globs (``m4x_det_*``), tags, group names or
``all``. Every file is read once per process, and not at all while the index kept on disk (``index_cache.py``)
matches every file's bytes; full validation against the registry happens when a task is
loaded for a run (or by ``metabench validate``), so listing stays fast.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from ..data.hf_source import register as register_source
from ..errors import ConfigError, DataError, did_you_mean
from ..registry import Problem, Registry
from . import index_cache
from .loader import RawConfig, config_hash, parse, read_raw
from .yamlsource import load_located
from .schema import GroupConfig, TaskConfig
from .validate import check_group, check_task, role_slices


#: The tag of a task whose data was built for one model (HARD(M) of MiniLM): its number means nothing for
#: another model, so `--tasks all` leaves it out; naming the task, its tag, group or family still selects it.
MODEL_SPECIFIC = "model_specific"


@dataclass
class LoadedTask:
    config: TaskConfig
    raw: RawConfig
    plugin: str
    plugin_version: str
    #: The ``aggregate: mean`` groups holding this task, with all their members (set by `TaskIndex.load`;
    #: recorded in the run, so group means are computed from run files alone).
    groups: list[dict] = field(default_factory=list)
    #: The folder the task file sits in under its registered task folder (``tasks/<family>/...``): what
    #: `metabench ls tasks` groups by and a --tasks name selects.
    family: str = ""

    @cached_property
    def hash(self) -> str:
        return config_hash(self.config)

    @property
    def name(self) -> str:
        return self.config.task

    @cached_property
    def slices(self) -> dict[str, list[tuple[str, str, dict]]]:
        """The task's data per split role, resolved once (:func:`metabench.config.validate.role_slices`)."""
        return role_slices(self.config)


#: What a built index consists of (the cached properties are recomputed from it on demand).
_STORED = ("tasks", "groups", "quarantined", "_group_plugins", "_problems")


class TaskIndex:
    """All tasks and groups from every registered task folder."""

    def __init__(self, registry: Registry):
        self.registry = registry
        self.tasks: dict[str, LoadedTask] = {}
        self.groups: dict[str, GroupConfig] = {}
        #: Task/group names whose file is broken, with the problem: selecting one says why.
        self.quarantined: dict[str, Problem] = {}
        self._group_plugins: dict[str, tuple[str, Path]] = {}
        #: What reading the files quarantined, in order: reported again when the index comes from the cache.
        self._problems: list[Problem] = []
        entry_key = index_cache.key(registry)
        stored = index_cache.read(entry_key)
        if stored is not None:
            vars(self).update(stored)
            for problem in self._problems:
                registry.quarantine(problem, ConfigError)
            return
        for folder, entry in registry.task_dirs():
            for path in sorted(folder.rglob("*.yaml")):
                if path.name.startswith("_"):
                    continue
                try:
                    self._add(path, folder, entry)
                except ConfigError as exc:
                    self._quarantine(path, entry, exc)
        self._extend_groups()
        self._check_groups()
        index_cache.write(entry_key, {name: getattr(self, name) for name in _STORED})

    def _extend_groups(self) -> None:
        """A group with ``extends: X`` adds its members to group X after X's own (extending groups in name order):
        a plugin's tasks join the core suite, and without the plugin the core suite is whole without them. X unknown
        quarantines the extending group's file."""
        for name in sorted(self.groups):
            group = self.groups.get(name)
            if group is None or group.extends is None or name not in self._group_plugins:
                continue
            target = self.groups.get(group.extends)
            if target is None or group.extends == name:
                plugin, path = self._group_plugins[name]
                self._drop_group(name)
                entry = next(e for _, e in self.registry.task_dirs() if e.plugin == plugin)
                self._quarantine(path, entry, ConfigError(
                    f"{path}:1: group '{name}' extends '{group.extends}', which no registered task folder defines"
                    f"{did_you_mean(group.extends, list(self.groups))}",
                    hint="name a group that exists in `extends:` (`metabench ls groups`), or install the plugin "
                    "that defines it"), disable=False)
                continue
            added = [member for member in group.task if member not in target.task]
            self.groups[group.extends] = target.model_copy(update={"task": [*target.task, *added]})

    def _drop_group(self, name: str) -> None:
        for view_group in [g for g in self.groups if g == name or g.startswith(f"{name}@")]:
            del self.groups[view_group]

    def _check_groups(self) -> None:
        """A group naming something that does not exist, or containing itself, is quarantined (with its file)
        like a broken task file: expanded on every run (mean groups are), it would break them all."""
        for name in sorted(self.groups):
            if name not in self.groups or name not in self._group_plugins:
                continue  # a view group (`<group>@<view>`) stands or falls with its group
            try:
                self._expand(name, ())
            except ConfigError as exc:
                plugin, path = self._group_plugins[name]
                self._drop_group(name)
                entry = next(e for _, e in self.registry.task_dirs() if e.plugin == plugin)
                # not "disable the plugin": the group alone is left out, and its missing member is most often
                # another plugin's task (a family not installed), which disabling this one would not bring back
                self._quarantine(path, entry, ConfigError(
                    f"{path}:1: group '{name}': {exc.message.removeprefix('--tasks: ')}",
                    hint="name existing tasks, tags or groups in `task:`; a member another plugin provides needs that "
                    "plugin installed (`metabench plugins` lists those loaded), or belongs in that plugin's own group "
                    "with `extends:`"), disable=False)

    def _add(self, path: Path, folder: Path, entry) -> None:
        raw = read_raw(path, folder, also=tuple(f for f, _ in self.registry.task_dirs()))
        parsed = parse(raw)
        if isinstance(parsed, GroupConfig):
            check_group(parsed, raw, self.registry)  # cheap, and a wrong paper-table binding would leave a cell silently empty
            self._unique(parsed.group, path, entry.plugin)
            self._group_plugins[parsed.group] = (entry.plugin, path)
            if parsed.views:
                for view in parsed.views:
                    self._unique(f"{parsed.group}@{view}", path, entry.plugin)
                    self.groups[f"{parsed.group}@{view}"] = parsed.model_copy(
                        update={"group": f"{parsed.group}@{view}", "task": [f"{m}@{view}" for m in parsed.task], "views": None}
                    )
                parsed = parsed.model_copy(
                    update={"task": [f"{parsed.group}@{v}" for v in parsed.views], "aggregate": "none", "views": None}
                )
            self.groups[parsed.group] = parsed
        elif parsed.views:
            self._add_views(parsed, raw, entry, _family(path, folder))
        else:
            self._unique(parsed.task, path, entry.plugin)
            self.tasks[parsed.task] = LoadedTask(parsed, raw, entry.plugin, entry.plugin_version, family=_family(path, folder))

    def _add_views(self, parsed: TaskConfig, raw: RawConfig, entry, family: str) -> None:
        """One task per view, ``<task>@<view>``, with kind_args.view set; the bare name becomes their group."""
        if parsed.kind != "classification" or parsed.kind_args.get("marker") != "pme":
            raise ConfigError(
                f"{raw.where('views')}: views need kind: classification with kind_args.marker: pme (items with a "
                f"target expression); task '{parsed.task}' has kind {parsed.kind!r}, marker "
                f"{parsed.kind_args.get('marker', 'none')!r}",
                hint="remove `views:` or mark the expression with kind_args.marker: pme",
            )
        self._unique(parsed.task, raw.path, entry.plugin)
        names = [f"{parsed.task}@{view}" for view in parsed.views]
        for view, name in zip(parsed.views, names):
            self._unique(name, raw.path, entry.plugin)
            config = parsed.model_copy(update={"task": name, "views": None, "kind_args": {**parsed.kind_args, "view": view}})
            self.tasks[name] = LoadedTask(config, raw, entry.plugin, entry.plugin_version, family=family)
        self.groups[parsed.task] = GroupConfig(group=parsed.task, task=names, metadata=parsed.metadata)
        self._group_plugins[parsed.task] = (entry.plugin, raw.path)

    def _unique(self, name: str, path: Path, plugin: str) -> None:
        """Task and group names are unique across plugins: a clash names both plugins and both files."""
        if name in self.tasks:
            other_plugin, other_path, what = self.tasks[name].plugin, self.tasks[name].raw.path, "task"
        elif name in self.groups:
            (other_plugin, other_path), what = self._group_plugins.get(name, ("?", "a group")), "group"
        else:
            return
        who = (f"by plugin '{other_plugin}' ({other_path}) and by plugin '{plugin}' ({path})" if other_plugin != plugin
               else f"twice by plugin '{plugin}': {other_path} and {path}")
        raise ConfigError(
            f"{path}:1: {what} name '{name}' is registered {who}",
            hint=f"task and group names are unique: rename one (or disable plugin '{other_plugin}')",
        )

    def _quarantine(self, path: Path, entry, exc: ConfigError, *, disable: bool = True) -> None:
        """A broken task file is dropped alone; the rest of its plugin's tasks stay. ``disable``: the fix also offers
        disabling the plugin (not for a group whose member another plugin lacks: that plugin may hold every built-in
        task)."""
        where, _, message = exc.message.partition(": ") if exc.message.startswith(str(path)) else (f"{path}:1", "", exc.message)
        fix = exc.hint or ""
        if disable or not fix:
            fix = f"{fix + '; or ' if fix else ''}disable the plugin with METABENCH_DISABLE_PLUGINS={entry.plugin}"
        problem = Problem(entry.plugin, where, message, fix)
        self.registry.quarantine(problem, ConfigError)
        self._problems.append(problem)
        self.quarantined.setdefault(_declared_name(path) or path.stem, problem)

    @cached_property
    def families(self) -> dict[str, list[str]]:
        """Family (the task file's folder under its task folder) -> its task names, sorted."""
        out: dict[str, list[str]] = {}
        for name, task in sorted(self.tasks.items()):
            out.setdefault(task.family, []).append(name)
        return dict(sorted(out.items()))

    @cached_property
    def tags(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for name, task in sorted(self.tasks.items()):
            for tag in task.config.tag:
                out.setdefault(tag, []).append(name)
        return out

    def select(self, selection: str) -> list[str]:
        """Task names for a --tasks value, in a stable order, without duplicates."""
        chosen: list[str] = []
        parts = [p.strip() for p in selection.split(",") if p.strip()]
        if not parts:
            raise ConfigError(f"--tasks '{selection}': names no task",
                              hint="e.g. --tasks m4x_det_en_mono, --tasks 'm4x_*' or --tasks all (`metabench ls tasks`)")
        for part in parts:
            chosen.extend(self._expand(part, ()))
        return list(dict.fromkeys(chosen))

    def _expand(self, part: str, seen: tuple[str, ...]) -> list[str]:
        if part == "all":
            return [name for name, task in sorted(self.tasks.items()) if MODEL_SPECIFIC not in task.config.tag]
        if part in self.tasks:
            return [part]
        if part in self.quarantined and part not in self.groups:
            problem = self.quarantined[part]
            raise ConfigError(f"--tasks: task '{part}' is quarantined: {problem.where}: {problem.message}",
                              hint=problem.fix)
        if part in self.groups:
            if part in seen:
                raise ConfigError(f"group '{part}' contains itself: {' -> '.join((*seen, part))}",
                                  hint="remove one of the groups from the other's `task:` list")
            return [n for member in self.groups[part].task for n in self._expand(member, (*seen, part))]
        if part in self.tags:
            return list(self.tags[part])
        if part in self.families:
            return list(self.families[part])
        if any(ch in part for ch in "*?["):
            hits = sorted(fnmatch.filter(self.tasks, part))
            if hits:
                return hits
            raise ConfigError(f"--tasks: the pattern '{part}' matches no task", hint="`metabench ls tasks` lists them")
        known = [*self.tasks, *self.groups, *self.tags, *self.families, "all"]
        raise ConfigError(
            f"--tasks: unknown task, tag, group or family '{part}'{did_you_mean(part, known)}",
            hint="`metabench ls tasks` lists tasks; `metabench ls groups` lists groups and tags",
        )

    def load(self, name: str, *, defer_data: bool = False) -> LoadedTask:
        """A task validated against the registry (kind, dataset, metrics...). ``defer_data``: a `datasets`
        source whose data cannot be had now is left for the task's job to fail on (a run's other jobs go on)."""
        if name not in self.tasks:
            self._expand(name, ())  # raises the did-you-mean error
        task = self.tasks[name]
        register_source(self.registry, task.config, task.raw, task.plugin, task.plugin_version, defer=defer_data)
        check_task(task.config, task.raw, self.registry)
        task.groups = self.mean_groups(name)
        return task

    def mean_groups(self, task_name: str) -> list[dict]:
        """The ``aggregate: mean`` groups holding a task: name, every member and the group's source."""
        return [{**group, "members": list(group["members"])} for group in self._mean_groups.get(task_name, [])]

    @cached_property
    def _mean_groups(self) -> dict[str, list[dict]]:
        """Task name -> its mean groups, expanded once (per task it was every group's expansion, per job)."""
        out: dict[str, list[dict]] = {}
        for name, group in sorted(self.groups.items()):
            if group.aggregate == "mean":
                members = self.select(name)
                for task_name in dict.fromkeys(members):
                    out.setdefault(task_name, []).append({"name": name, "members": members, "source": group.metadata.source})
        return out


def _family(path: Path, folder: Path) -> str:
    """``tasks/vua/vua18_seq.yaml`` -> ``vua``; a file directly in its task folder takes the folder's name."""
    try:
        parts = path.resolve().relative_to(folder.resolve()).parts
    except ValueError:
        parts = ()
    return parts[0] if len(parts) > 1 else folder.name


def _declared_name(path: Path) -> str | None:
    """The ``task:``/``group:`` name a broken file declares, found without trusting the rest of it."""
    try:
        data = load_located(path).data
    except ConfigError:
        return None
    name = data.get("group", data.get("task")) if isinstance(data, dict) else None  # a group's `task:` lists members
    return name if isinstance(name, str) else None


def _task_root(path: Path, registry: Registry, given: Path) -> Path:
    """Includes stay inside the registered task folder holding ``path``, else inside the folder given."""
    resolved = path.resolve()
    for folder, _entry in registry.task_dirs():
        if resolved.is_relative_to(folder):
            return folder
    return given


def validate_paths(paths: list[Path], registry: Registry) -> list[tuple[Path, str | None]]:
    """(file, error or None) for every YAML file under the given paths: `metabench validate`."""
    files: list[tuple[Path, Path]] = []
    for path in paths:
        if path.is_dir():
            files.extend((p, _task_root(p, registry, path)) for p in sorted(path.rglob("*.yaml")))
        else:
            files.append((path, _task_root(path, registry, path.parent)))
    results, valid = [], {}
    for path, root in files:
        try:
            raw = read_raw(path, root, also=tuple(f for f, _ in registry.task_dirs()))
            if path.name.startswith("_"):
                results.append((path, None))
                continue
            parsed = parse(raw)
            if isinstance(parsed, TaskConfig):
                register_source(registry, parsed, raw)
                check_task(parsed, raw, registry)
            else:
                check_group(parsed, raw, registry)
            results.append((path, None))
            valid[path] = parsed
        except (ConfigError, DataError) as exc:
            results.append((path, str(exc)))
    problems = _across_files(valid, TaskIndex(registry)) if valid else {}
    return [(path, problems.get(path, error)) for path, error in results]


def _across_files(valid: dict[Path, TaskConfig | GroupConfig], index: TaskIndex) -> dict[Path, str]:
    """What no single file shows: a name a registered task or group already holds (a run would quarantine the
    file), and a group naming nothing that exists or containing itself, among the files and the registered."""
    def names(config) -> list[str]:
        own = config.task if isinstance(config, TaskConfig) else config.group
        return [own, *(f"{own}@{view}" for view in (config.views or ()))]

    def file_of(name: str) -> Path | None:
        if name in index.tasks:
            return index.tasks[name].raw.path
        return index._group_plugins.get(name, (None, None))[1]

    problems: dict[Path, str] = {}
    declared = {name: path for path, config in valid.items() for name in names(config)}
    for path, config in valid.items():
        for name in names(config):
            other = file_of(name)
            if other is not None and Path(other).resolve() != path.resolve():
                problems[path] = (f"{path}:1: the name '{name}' is already used by {Path(other)}; a run would quarantine "
                                  f"this file\n  hint: rename it (task and group names are unique)")
                break
    groups = {n: c.task for p, c in valid.items() if isinstance(c, GroupConfig) for n in names(c)[:1]}
    known = set(index.tasks) | set(index.groups) | set(index.tags) | set(declared) | {"all"}
    for name, members in groups.items():
        path = declared[name]
        for member in members:
            globbed = any(ch in member for ch in "*?[") and fnmatch.filter([*index.tasks, *declared], member)
            if member not in known and not globbed:
                problems.setdefault(path, f"{path}:1: group '{name}' names '{member}', which is no task, tag or group"
                                          f"{did_you_mean(member, known)}\n  hint: name existing tasks, tags or groups")
        extends = valid[path].extends
        if extends is not None and extends not in set(index.groups) | set(declared) - {name}:
            problems.setdefault(path, f"{path}:1: group '{name}' extends '{extends}', which no registered task folder "
                                      f"defines{did_you_mean(extends, [*index.groups, *declared])}\n"
                                      "  hint: name a group that exists in `extends:`, or install the plugin that defines it")
        cycle = _cycle(name, groups, (), index)
        if cycle:
            problems.setdefault(path, f"{path}:1: group '{name}' contains itself: {' -> '.join(cycle)}\n"
                                      "  hint: remove one of the groups from the other's `task:` list")
    return problems


def _cycle(name: str, groups: dict[str, list[str]], seen: tuple[str, ...], index: TaskIndex) -> tuple[str, ...] | None:
    """The chain of groups through which ``name`` reaches itself, if it does (files first, then registered)."""
    if name in seen:
        return (*seen, name) if name == seen[0] else None
    members = groups.get(name) or (index.groups[name].task if name in index.groups else [])
    for member in members:
        found = _cycle(member, groups, (*seen, name), index)
        if found:
            return found
    return None

"""The task index kept on disk (metabench/config/index_cache.py): a hit is the index a fresh read builds, any
change to what the index is made of changes the key, and quarantined files are reported on a hit too."""

from __future__ import annotations

import os
import types

import pytest

from metabench import hookimpl, plugins
from metabench.config import index_cache, yamlsource
from metabench.config.index import TaskIndex
from metabench.errors import ConfigError

TASK = """\
task: cached_task
kind: classification
dataset: toy_cls
splits: {train: train, test: test}
labels: {names: [literal, metaphorical], positive: metaphorical}
metrics: [accuracy]
tag: [first]
protocol:
  baseline: {seeds: 1}
"""


@pytest.fixture
def folder_registry(tmp_path, monkeypatch):
    """(task folder, a function loading the toy registry plus a plugin that registers that folder)."""
    import toy_plugin

    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "cached_task.yaml").write_text(TASK)
    module = types.ModuleType("index_cache_plugin")
    module.metabench_register_tasks = hookimpl(lambda register: register(str(folder)))
    monkeypatch.setenv("METABENCH_DATA_DIR", str(toy_plugin.DATA_DIR))
    monkeypatch.setenv("METABENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("METABENCH_STRICT", raising=False)
    return folder, lambda strict=False: plugins.load(extra_plugins=(toy_plugin, module), strict=strict)


def _content(index: TaskIndex) -> tuple:
    return ({n: (t.hash, t.family, t.plugin, t.config.tag, str(t.raw.path)) for n, t in index.tasks.items()},
            {n: g.model_dump() for n, g in index.groups.items()}, sorted(index.quarantined))


def test_a_hit_is_the_index_a_fresh_read_builds_and_reads_no_file(folder_registry, monkeypatch):
    _, load = folder_registry
    registry = load()
    fresh = TaskIndex(registry)
    assert index_cache.cache_file().is_file()

    def no_read(*args, **kwargs):
        raise AssertionError("a hit read a task file")

    monkeypatch.setattr("metabench.config.index.read_raw", no_read)
    cached = TaskIndex(registry)
    assert _content(cached) == _content(fresh) and "cached_task" in cached.tasks
    assert cached.select("first") == ["cached_task"]
    assert cached.load("cached_task").config.dataset == "toy_cls"  # still validated against the registry


def test_changing_a_task_file_changes_the_key_even_with_the_same_size_and_mtime(folder_registry, monkeypatch):
    folder, load = folder_registry
    registry = load()
    path = folder / "cached_task.yaml"
    before = index_cache.key(registry)
    assert TaskIndex(registry).tasks["cached_task"].config.tag == ["first"]
    stat = path.stat()
    path.write_text(TASK.replace("[first]", "[other]"))  # same length
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size and index_cache.key(registry) != before
    monkeypatch.setattr(yamlsource, "_parsed", {})  # a new process (this one's YAML memo goes by mtime)
    assert TaskIndex(registry).tasks["cached_task"].config.tag == ["other"]


def test_a_new_file_an_include_base_or_the_config_source_changes_the_key(folder_registry, monkeypatch):
    folder, load = folder_registry
    registry = load()
    keys = [index_cache.key(registry)]
    (folder / "_base.yaml").write_text("kind: classification\n")  # a base a file may include: part of the key
    keys.append(index_cache.key(registry))
    (folder / "second.yaml").write_text(TASK.replace("cached_task", "second_task"))
    keys.append(index_cache.key(registry))
    assert "second_task" in TaskIndex(registry).tasks
    monkeypatch.setattr(index_cache, "_config_source", lambda: "edited schema")
    keys.append(index_cache.key(registry))
    assert len(set(keys)) == len(keys)


def test_another_set_of_paper_views_changes_the_key(folder_registry):
    _, load = folder_registry
    registry = load()
    before = index_cache.key(registry)
    entry = registry.entries("paper_view")[0]
    registry._entries["paper_view"]["renamed_view"] = type(entry)(entry.category, "renamed_view", entry.target,
                                                                   entry.plugin, entry.plugin_version)
    assert index_cache.key(registry) != before


def test_a_quarantined_file_is_reported_on_a_hit_too(folder_registry, capsys):
    folder, load = folder_registry
    (folder / "broken.yaml").write_text("task: broken_task\nkind: classification\nnot_a_key: 1\n")
    assert "broken_task" in TaskIndex(load()).quarantined
    assert "broken.yaml" in capsys.readouterr().err
    cached = TaskIndex(load())  # a new process's registry: the warning again, from the stored index
    assert "broken_task" in cached.quarantined and "broken.yaml" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="broken.yaml"):
        TaskIndex(load(strict=True))


@pytest.mark.slow
def test_a_torn_cache_file_is_a_miss(folder_registry):
    _, load = folder_registry
    registry = load()
    TaskIndex(registry)
    index_cache.cache_file().write_bytes(b"not a pickle")
    assert "cached_task" in TaskIndex(registry).tasks
    assert index_cache.read(index_cache.key(registry)) is not None  # rewritten
